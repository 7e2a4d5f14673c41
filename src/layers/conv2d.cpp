#include "layers/conv2d.h"

#include "core/error.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/onednn/weight_layout.h"
#include "layers/weighted_step.h"

namespace tenfold::layers {

namespace {

using kernels::onednn::Conv2DKernel;
using kernels::onednn::OnednnWeightLayout;

// NOTE: oneDNN picks the weight layout for a representative batch once, at build; every
// batch size then runs with that layout.
constexpr int64_t layout_batch = 256;

}  // namespace

Conv2D::Conv2D(const Conv2DOptions& options)
    : Layer("conv2d", options.name),
      options_(options),
      padding_(kernels::parse_padding(options.padding)),
      activation_(kernels::parse_activation(options.activation)) {
  check_argument(options.filters > 0, "Conv2D filters must be positive, got " +
                                          std::to_string(options.filters));
  Initializer(options.kernel_initializer);  // validates the names early
  Initializer(options.bias_initializer);
}

kernels::WindowGeometry Conv2D::geometry(const Shape& input_shape) const {
  check_argument(input_shape.rank() == 4,
                 "Conv2D '" + name() + "' expects inputs (batch, height, width, channels), got " +
                     input_shape.to_string(true));
  return kernels::make_window_geometry(input_shape[0], input_shape[1], input_shape[2],
                                       input_shape[3], options_.filters, options_.kernel_size[0],
                                       options_.kernel_size[1], options_.strides[0],
                                       options_.strides[1], padding_);
}

Shape Conv2D::compute_output_shape(const Shape& input_shape) const {
  kernels::WindowGeometry g = geometry(input_shape);
  return {input_shape[0], g.out_height, g.out_width, options_.filters};
}

void Conv2D::build_weights(const Shape& input_shape, Random& random) {
  kernels::WindowGeometry g = geometry(input_shape.with_batch(layout_batch));
  kernel_layout_ = std::make_shared<OnednnWeightLayout>(Conv2DKernel::keras_weights_desc(g),
                                                        Conv2DKernel::preferred_weights_desc(g));
  add_weight("kernel", {g.window_height, g.window_width, g.in_channels, g.out_channels},
             Initializer(options_.kernel_initializer), random, kernel_layout_);
  if (options_.use_bias) {
    add_weight("bias", {g.out_channels}, Initializer(options_.bias_initializer), random);
  }
}

std::unique_ptr<LayerStep> Conv2D::compile(const Shape& input_shape, const CompileOptions& options) {
  kernels::WindowGeometry g = geometry(input_shape);
  const auto& layout = static_cast<const OnednnWeightLayout&>(*kernel_layout_);
  return std::make_unique<WeightedStep<Conv2DKernel>>(
      activation_, g.batch * g.out_height * g.out_width, g.out_channels, weights(),
      [&](kernels::Activation fused) {
        return Conv2DKernel(g, fused, options_.use_bias, layout.native_desc(), options.need_input_gradient);
      });
}

nlohmann::json Conv2D::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["filters"] = options_.filters;
  config["kernel_size"] = options_.kernel_size;
  config["strides"] = options_.strides;
  config["padding"] = options_.padding;
  config["data_format"] = "channels_last";
  config["dilation_rate"] = {1, 1};
  config["groups"] = 1;
  add_weighted_config(config, options_.activation, options_.use_bias,
                      options_.kernel_initializer, options_.bias_initializer);
  return config;
}

}  // namespace tenfold::layers
