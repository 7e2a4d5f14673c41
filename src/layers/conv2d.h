#pragma once
// keras.layers.Conv2D over NHWC inputs (dilation_rate, groups); DepthwiseConv2D: a
// convolution with one group per input channel, depth_multiplier filters each; Conv1D over
// [batch, steps, channels]: the same kernels on one row of steps (and 'causal' padding).
#include <array>

#include "kernels/window.h"
#include "layers/layer.h"

namespace tenfold::layers {

struct Conv2DOptions {
  int64_t filters = 0;
  std::array<int64_t, 2> kernel_size = {3, 3};
  std::array<int64_t, 2> strides = {1, 1};
  std::string padding = "valid";
  std::array<int64_t, 2> dilation_rate = {1, 1};
  int64_t groups = 1;
  std::string activation = "linear";
  bool use_bias = true;
  Initializer kernel_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
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
  virtual kernels::WindowGeometry geometry(const Shape& input_shape) const;
  kernels::Activation activation() const { return activation_; }
  /// The kernel's native layout (after build).
  const WeightLayout& kernel_layout() const { return *kernel_layout_; }

 protected:
  /// DepthwiseConv2D's: groups = input channels, filters = input channels x depth_multiplier,
  /// kernel [KH, KW, in, depth_multiplier] (options' filters and groups unused).
  Conv2D(const Conv2DOptions& options, int64_t depth_multiplier, const std::string& snake_name = "");
  void build_weights(const Shape& input_shape, Random& random) override;
  /// The kernel's shape in Keras' layout.
  virtual Shape keras_kernel_shape(const kernels::WindowGeometry& g) const;
  int64_t depth_multiplier() const { return depth_multiplier_; }

 private:
  int64_t depth_multiplier_ = 0;  // 0: a plain Conv2D
  Conv2DOptions options_;
  kernels::Padding padding_;
  kernels::Activation activation_;
  std::shared_ptr<const WeightLayout> kernel_layout_;
};

/// [batch, height, width, in] -> [batch, out_height, out_width, in * depth_multiplier]
class DepthwiseConv2D : public Conv2D {
 public:
  /// options.filters and options.groups are not used; kernel_initializer is Keras'
  /// depthwise_initializer.
  DepthwiseConv2D(const Conv2DOptions& options, int64_t depth_multiplier = 1);
  std::string class_name() const override { return "DepthwiseConv2D"; }
  nlohmann::json get_config() const override;
};

struct Conv1DOptions {
  int64_t filters = 0;
  int64_t kernel_size = 3;
  int64_t strides = 1;
  /// "valid", "same" or "causal" (zeros before the first step only: output t sees inputs <= t).
  std::string padding = "valid";
  int64_t dilation_rate = 1;
  int64_t groups = 1;
  std::string activation = "linear";
  bool use_bias = true;
  Initializer kernel_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::string name;
};

/// [batch, steps, in] -> [batch, out_steps, filters]; kernel [K, in / groups, filters].
class Conv1D : public Conv2D {
 public:
  explicit Conv1D(const Conv1DOptions& options);
  std::string class_name() const override { return "Conv1D"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  nlohmann::json get_config() const override;
  /// The geometry of the row [batch, 1, steps, in].
  kernels::WindowGeometry geometry(const Shape& input_shape) const override;

 protected:
  Shape keras_kernel_shape(const kernels::WindowGeometry& g) const override;

 private:
  Conv1DOptions one_dimensional_options_;  // Conv2D::options() holds their 2D form (causal as valid)
};

}  // namespace tenfold::layers
