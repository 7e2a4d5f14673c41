#pragma once
// keras.layers.LayerNormalization over the last axis: each sample's features normalised with
// their own mean and variance, then scaled by gamma and shifted by beta (Keras' weight order).
// Unlike BatchNormalization it has no state and behaves the same in training and inference.
#include "layers/layer.h"

namespace tenfold::layers {

struct LayerNormalizationOptions {
  /// The normalised axis: the last, as -1 or as rank - 1.
  int64_t axis = -1;
  double epsilon = 1e-3;
  bool center = true;
  bool scale = true;
  Initializer beta_initializer = "zeros";
  Initializer gamma_initializer = "ones";
  std::string name;
};

class LayerNormalization : public Layer {
 public:
  explicit LayerNormalization(const LayerNormalizationOptions& options = {});
  std::string class_name() const override { return "LayerNormalization"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 protected:
  void build_weights(const Shape& input_shape, Random& random) override;

 private:
  LayerNormalizationOptions options_;
  Variable* gamma_ = nullptr;
  Variable* beta_ = nullptr;
};

}  // namespace tenfold::layers
