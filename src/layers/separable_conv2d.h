#pragma once
// keras.layers.SeparableConv2D: a depthwise convolution (depth_multiplier filters per input
// channel, with the layer's strides, padding and dilation) followed by a pointwise 1x1
// convolution to `filters` channels, then bias and activation. Weights, in Keras' order:
// depthwise_kernel [KH, KW, in, multiplier], pointwise_kernel [1, 1, in x multiplier,
// filters], bias [filters].
#include <memory>

#include "layers/conv2d.h"

namespace tenfold::layers {

class SeparableConv2D : public Layer {
 public:
  /// options.kernel_initializer is Keras' depthwise_initializer; options.groups is unused.
  SeparableConv2D(const Conv2DOptions& options, int64_t depth_multiplier = 1,
                  Initializer pointwise_initializer = "glorot_uniform");
  std::string class_name() const override { return "SeparableConv2D"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 protected:
  void build_weights(const Shape& input_shape, Random& random) override;

 private:
  /// The depthwise half's geometry, and the pointwise half's on its output.
  kernels::WindowGeometry depthwise_geometry(const Shape& input_shape) const;
  kernels::WindowGeometry pointwise_geometry(const Shape& input_shape) const;

  Conv2DOptions options_;
  int64_t depth_multiplier_;
  Initializer pointwise_initializer_;
  std::shared_ptr<const WeightLayout> depthwise_layout_, pointwise_layout_;
};

}  // namespace tenfold::layers
