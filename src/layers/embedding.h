#pragma once
// keras.layers.Embedding: indices (held in float inputs, as Keras' float32 Input carries
// them, truncated to integers as Keras casts them) to rows of a trainable table [input_dim, output_dim]: [batch, ...] ->
// [batch, ..., output_dim]. The indices get no gradient; the table's gradient adds each
// position's output gradient into its row.
#include "layers/layer.h"

namespace tenfold::layers {

class Embedding : public Layer {
 public:
  Embedding(int64_t input_dim, int64_t output_dim, Initializer embeddings_initializer = uniform_initializer(),
            const std::string& name = "");
  std::string class_name() const override { return "Embedding"; }
  bool casts_inputs() const override { return false; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;
  /// Keras' default, RandomUniform(-0.05, 0.05).
  static Initializer uniform_initializer();

 protected:
  void build_weights(const Shape& input_shape, Random& random) override;

 private:
  int64_t input_dim_, output_dim_;
  Initializer initializer_;
};

}  // namespace tenfold::layers
