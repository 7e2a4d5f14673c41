#pragma once
// keras.layers.Conv2D over NHWC inputs.
#include <array>

#include "kernels/window.h"
#include "layers/layer.h"

namespace tenfold::layers {

struct Conv2DOptions {
  int64_t filters = 0;
  std::array<int64_t, 2> kernel_size = {3, 3};
  std::array<int64_t, 2> strides = {1, 1};
  std::string padding = "valid";
  std::string activation = "linear";
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
  std::string name;
};

/// [batch, height, width, in] -> [batch, out_height, out_width, filters]
class Conv2D : public Layer {
 public:
  explicit Conv2D(const Conv2DOptions& options);
  std::string class_name() const override { return "Conv2D"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;
  const Conv2DOptions& options() const { return options_; }
  kernels::WindowGeometry geometry(const Shape& input_shape) const;
  kernels::Activation activation() const { return activation_; }
  /// The kernel's native layout (after build).
  const WeightLayout& kernel_layout() const { return *kernel_layout_; }

 protected:
  void build_weights(const Shape& input_shape, Random& random) override;

 private:
  Conv2DOptions options_;
  kernels::Padding padding_;
  kernels::Activation activation_;
  std::shared_ptr<const WeightLayout> kernel_layout_;
};

}  // namespace tenfold::layers
