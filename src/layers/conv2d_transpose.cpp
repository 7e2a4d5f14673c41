#include "layers/conv2d_transpose.h"

#include "core/error.h"
#include "kernels/onednn/conv2d_transpose.h"
#include "kernels/onednn/weight_layout.h"
#include "layers/weighted_step.h"

namespace tenfold::layers {

namespace {

using kernels::onednn::Conv2DKernel;
using kernels::onednn::Conv2DTransposeKernel;
using kernels::onednn::OnednnWeightLayout;

}  // namespace

Conv2DTranspose::Conv2DTranspose(const Conv2DOptions& options)
    : Layer("conv2d_transpose", options.name), options_(options) {
  const std::string what = "Conv2DTranspose '" + name() + "'";
  check_argument(options.filters > 0, what + ": filters must be positive, got " + std::to_string(options.filters));
  check_argument(options.groups == 1, what + ": groups are not supported");
  check_argument(options.dilation_rate == std::array<int64_t, 2>{1, 1},
                 what + ": dilation_rate > 1 is not supported yet; use dilation_rate=1");
  kernels::parse_padding(options.padding);
  kernels::parse_activation(options.activation);
}

kernels::WindowGeometry Conv2DTranspose::mirrored_geometry(const Shape& input_shape) const {
  check_argument(input_shape.rank() == 4, "Conv2DTranspose '" + name() +
                                              "' expects inputs (batch, height, width, channels), got " +
                                              input_shape.to_string(true));
  const kernels::Padding padding = kernels::parse_padding(options_.padding);
  auto output_size = [&](int64_t in, int axis) {
    return padding == kernels::Padding::same ? in * options_.strides[size_t(axis)]
                                             : (in - 1) * options_.strides[size_t(axis)] + options_.kernel_size[size_t(axis)];
  };
  const kernels::WindowGeometry g = kernels::make_window_geometry(
      input_shape[0], output_size(input_shape[1], 0), output_size(input_shape[2], 1), options_.filters, input_shape[3],
      options_.kernel_size[0], options_.kernel_size[1], options_.strides[0], options_.strides[1], padding);
  check_argument(g.out_height == input_shape[1] && g.out_width == input_shape[2],
                 "Conv2DTranspose '" + name() + "': no convolution maps its output back to " + input_shape.to_string(true));
  return g;
}

Shape Conv2DTranspose::compute_output_shape(const Shape& input_shape) const {
  const kernels::WindowGeometry g = mirrored_geometry(input_shape);
  return {input_shape[0], g.in_height, g.in_width, g.in_channels};
}

void Conv2DTranspose::build_weights(const Shape& input_shape, Random& random) {
  const kernels::WindowGeometry g = mirrored_geometry(input_shape.with_batch(kernels::onednn::weight_layout_batch));
  kernel_layout_ = std::make_shared<OnednnWeightLayout>(Conv2DKernel::keras_weights_desc(g),
                                                        Conv2DKernel::preferred_weights_desc(g));
  add_weight("kernel", {g.window_height, g.window_width, g.in_channels, g.out_channels}, options_.kernel_initializer,
             random, kernel_layout_);
  if (options_.use_bias) add_weight("bias", {g.in_channels}, options_.bias_initializer, random);
}

std::unique_ptr<LayerStep> Conv2DTranspose::compile(const Shape& input_shape, const CompileOptions& options) {
  const kernels::WindowGeometry g = mirrored_geometry(input_shape);
  const auto& layout = static_cast<const OnednnWeightLayout&>(*kernel_layout_);
  return std::make_unique<WeightedStep<Conv2DTransposeKernel>>(
      kernels::parse_activation(options_.activation), g.batch * g.in_height * g.in_width, g.in_channels, weights(),
      DType::float32, [&](kernels::Activation fused, DType) {
        return Conv2DTransposeKernel(g, fused, options_.use_bias, layout.native_desc(), options.need_input_gradient);
      });
}

nlohmann::json Conv2DTranspose::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["filters"] = options_.filters;
  config["kernel_size"] = options_.kernel_size;
  config["strides"] = options_.strides;
  config["padding"] = options_.padding;
  config["output_padding"] = nullptr;
  config["data_format"] = "channels_last";
  config["dilation_rate"] = options_.dilation_rate;
  add_weighted_config(config, options_.activation, options_.use_bias, options_.kernel_initializer,
                      options_.bias_initializer);
  return config;
}

}  // namespace tenfold::layers
