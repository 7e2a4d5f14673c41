#include "layers/conv2d.h"

#include "core/error.h"
#include "kernels/direct_conv.h"
#include "kernels/few_channel_conv.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/onednn/weight_layout.h"
#include "layers/weighted_step.h"

namespace tenfold::layers {

namespace {

using kernels::onednn::Conv2DKernel;
using kernels::onednn::OnednnWeightLayout;

}  // namespace

Conv2D::Conv2D(const Conv2DOptions& options) : Conv2D(options, 0) {}

Conv2D::Conv2D(const Conv2DOptions& options, int64_t depth_multiplier, const std::string& snake_name)
    : Layer(!snake_name.empty() ? snake_name : depth_multiplier ? "depthwise_conv2d" : "conv2d", options.name),
      depth_multiplier_(depth_multiplier),
      options_(options),
      padding_(kernels::parse_padding(options.padding)),
      activation_(kernels::parse_activation(options.activation)) {
  const std::string what = std::string(snake_name == "conv1d" ? "Conv1D" : depth_multiplier ? "DepthwiseConv2D" : "Conv2D") +
                           " '" + name() + "'";
  if (!depth_multiplier) {
    check_argument(options.filters > 0, what + ": filters must be positive, got " + std::to_string(options.filters));
    check_argument(options.groups > 0 && options.filters % options.groups == 0,
                   what + ": groups must divide filters, got groups " + std::to_string(options.groups) +
                       " for " + std::to_string(options.filters) + " filters");
  }
  for (int64_t rate : options.dilation_rate) {
    check_argument(rate >= 1, what + ": dilation_rate must be positive");
  }
  const bool dilated = options.dilation_rate[0] > 1 || options.dilation_rate[1] > 1;
  const bool strided = options.strides[0] > 1 || options.strides[1] > 1;
  check_argument(!(dilated && strided), what + ": strides > 1 together with dilation_rate > 1 is "
                                               "not supported (nor in Keras)");
}

kernels::WindowGeometry Conv2D::geometry(const Shape& input_shape) const {
  const std::string what = depth_multiplier_ ? "DepthwiseConv2D" : "Conv2D";
  check_argument(input_shape.rank() == 4,
                 what + " '" + name() + "' expects inputs (batch, height, width, channels), got " +
                     input_shape.to_string(true));
  const int64_t channels = input_shape[3];
  const int64_t groups = depth_multiplier_ ? channels : options_.groups;
  const int64_t filters = depth_multiplier_ ? channels * depth_multiplier_ : options_.filters;
  check_argument(channels % groups == 0, what + " '" + name() + "': groups " + std::to_string(groups) +
                                             " must divide the input's " + std::to_string(channels) + " channels");
  return kernels::make_window_geometry(input_shape[0], input_shape[1], input_shape[2], channels,
                                       filters, options_.kernel_size[0], options_.kernel_size[1],
                                       options_.strides[0], options_.strides[1], padding_,
                                       options_.dilation_rate[0], options_.dilation_rate[1], groups);
}

Shape Conv2D::compute_output_shape(const Shape& input_shape) const {
  kernels::WindowGeometry g = geometry(input_shape);
  return {input_shape[0], g.out_height, g.out_width, g.out_channels};
}

void Conv2D::build_weights(const Shape& input_shape, Random& random) {
  kernels::WindowGeometry g = geometry(input_shape.with_batch(kernels::onednn::weight_layout_batch));
  kernel_layout_ = std::make_shared<OnednnWeightLayout>(Conv2DKernel::keras_weights_desc(g),
                                                        Conv2DKernel::preferred_weights_desc(g));
  add_weight("kernel", keras_kernel_shape(g), options_.kernel_initializer, random, kernel_layout_);
  if (options_.use_bias) {
    add_weight("bias", {g.out_channels}, options_.bias_initializer, random);
  }
}

Shape Conv2D::keras_kernel_shape(const kernels::WindowGeometry& g) const {
  // A depthwise kernel [KH, KW, in, multiplier] is, in memory, a grouped one [KH, KW, 1, in x multiplier].
  if (depth_multiplier_) return {g.window_height, g.window_width, g.in_channels, depth_multiplier_};
  return {g.window_height, g.window_width, g.in_channels / g.groups, g.out_channels};
}

std::unique_ptr<LayerStep> Conv2D::compile(const Shape& input_shape, const CompileOptions& options) {
  kernels::WindowGeometry g = geometry(input_shape);
  const auto& layout = static_cast<const OnednnWeightLayout&>(*kernel_layout_);
  const int64_t rows = g.batch * g.out_height * g.out_width;
  if (kernels::DirectConv2DKernel::handles(g, activation_, options.need_input_gradient)) {
    return std::make_unique<WeightedStep<kernels::DirectConv2DKernel>>(
        activation_, rows, g.out_channels, weights(), options.compute_dtype, [&](kernels::Activation fused, DType dtype) {
          return kernels::DirectConv2DKernel(g, fused, options_.use_bias, layout.native_desc(),
                                             options.need_weight_gradients, dtype, dtype);
        });
  }
  if (kernels::FewChannelConv2DKernel::handles(g, options.need_input_gradient)) {
    return std::make_unique<WeightedStep<kernels::FewChannelConv2DKernel>>(
        activation_, rows, g.out_channels, weights(), options.compute_dtype, [&](kernels::Activation fused, DType dtype) {
          return kernels::FewChannelConv2DKernel(g, fused, options_.use_bias, layout.native_desc(),
                                                 options.need_weight_gradients, dtype);
        });
  }
  return std::make_unique<WeightedStep<Conv2DKernel>>(
      activation_, rows, g.out_channels, weights(), options.compute_dtype, [&](kernels::Activation fused, DType dtype) {
        return Conv2DKernel(g, fused, options_.use_bias, layout.native_desc(), options.need_input_gradient, dtype,
                            false, options.need_weight_gradients ? Conv2DKernel::WeightGradients::fastest
                                                                 : Conv2DKernel::WeightGradients::none);
      },
      kernels::onednn::runs_faster_after_kernel(activation_, options.compute_dtype));
}

nlohmann::json Conv2D::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["filters"] = options_.filters;
  config["kernel_size"] = options_.kernel_size;
  config["strides"] = options_.strides;
  config["padding"] = options_.padding;
  config["data_format"] = "channels_last";
  config["dilation_rate"] = options_.dilation_rate;
  config["groups"] = options_.groups;
  add_weighted_config(config, options_.activation, options_.use_bias,
                      options_.kernel_initializer, options_.bias_initializer);
  return config;
}

DepthwiseConv2D::DepthwiseConv2D(const Conv2DOptions& options, int64_t depth_multiplier)
    : Conv2D(options, depth_multiplier) {
  check_argument(depth_multiplier > 0, "DepthwiseConv2D depth_multiplier must be positive, got " +
                                           std::to_string(depth_multiplier));
}

nlohmann::json DepthwiseConv2D::get_config() const {
  nlohmann::json config = Conv2D::get_config();
  // Keras' keys: no filters or groups; the kernel's are depthwise_*.
  for (const char* key : {"filters", "groups", "kernel_initializer", "kernel_regularizer", "kernel_constraint"}) {
    config.erase(key);
  }
  config["depth_multiplier"] = depth_multiplier();
  config["depthwise_initializer"] = options().kernel_initializer.get_config();
  config["depthwise_regularizer"] = nullptr;
  config["depthwise_constraint"] = nullptr;
  return config;
}

Conv1D::Conv1D(const Conv1DOptions& options)
    : Conv2D(Conv2DOptions{.filters = options.filters,
                           .kernel_size = {1, options.kernel_size},
                           .strides = {1, options.strides},
                           .padding = options.padding == "causal" ? "valid" : options.padding,
                           .dilation_rate = {1, options.dilation_rate},
                           .groups = options.groups,
                           .activation = options.activation,
                           .use_bias = options.use_bias,
                           .kernel_initializer = options.kernel_initializer,
                           .bias_initializer = options.bias_initializer,
                           .name = options.name},
             0, "conv1d"),
      one_dimensional_options_(options) {
  check_argument(options.kernel_size > 0, "Conv1D '" + name() + "': kernel_size must be positive");
}

kernels::WindowGeometry Conv1D::geometry(const Shape& input_shape) const {
  check_argument(input_shape.rank() == 3, "Conv1D '" + name() + "' expects inputs (batch, steps, channels), got " +
                                              input_shape.to_string(true));
  kernels::WindowGeometry g = Conv2D::geometry(Shape{input_shape[0], 1, input_shape[1], input_shape[2]});
  if (one_dimensional_options_.padding == "causal") {
    // Keras: (kernel_size - 1) * dilation zeros before the first step, then 'valid'.
    g.pad_left = (one_dimensional_options_.kernel_size - 1) * one_dimensional_options_.dilation_rate;
    const int64_t span = g.pad_left + 1;  // the dilated window
    g.out_width = (g.in_width + g.pad_left - span) / g.stride_width + 1;
  }
  return g;
}

Shape Conv1D::compute_output_shape(const Shape& input_shape) const {
  const kernels::WindowGeometry g = geometry(input_shape);
  return {input_shape[0], g.out_width, g.out_channels};
}

Shape Conv1D::keras_kernel_shape(const kernels::WindowGeometry& g) const {
  return {g.window_width, g.in_channels / g.groups, g.out_channels};
}

nlohmann::json Conv1D::get_config() const {
  nlohmann::json config = Conv2D::get_config();
  config["kernel_size"] = {one_dimensional_options_.kernel_size};
  config["strides"] = {one_dimensional_options_.strides};
  config["padding"] = one_dimensional_options_.padding;
  config["dilation_rate"] = {one_dimensional_options_.dilation_rate};
  return config;
}

}  // namespace tenfold::layers
