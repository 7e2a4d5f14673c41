#pragma once
// keras.layers.Dense: applied on the last axis.
#include "kernels/window.h"
#include "layers/layer.h"

namespace tenfold::layers {

struct DenseOptions {
  int64_t units = 0;
  std::string activation = "linear";
  bool use_bias = true;
  Initializer kernel_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::string name;
};

/// [..., in] -> [..., units]
class Dense : public Layer {
 public:
  explicit Dense(const DenseOptions& options);
  std::string class_name() const override { return "Dense"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;
  const DenseOptions& options() const { return options_; }

 protected:
  void build_weights(const Shape& input_shape, Random& random) override;

 private:
  DenseOptions options_;
  kernels::Activation activation_;
};

}  // namespace tenfold::layers
