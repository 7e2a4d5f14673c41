#include "layers/separable_conv2d.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/onednn/weight_layout.h"
#include "layers/weighted_step.h"

namespace tenfold::layers {

namespace {

using kernels::onednn::Conv2DKernel;
using kernels::onednn::OnednnWeightLayout;

/// The two convolutions in turn, the depthwise output kept for backward.
class SeparableStep : public LayerStep {
 public:
  SeparableStep(std::unique_ptr<LayerStep> depthwise, std::unique_ptr<LayerStep> pointwise, const Shape& middle)
      : depthwise_(std::move(depthwise)), pointwise_(std::move(pointwise)), middle_(middle), grad_middle_(middle) {}

  void forward(const Tensor& input, Tensor& output, bool training) override {
    depthwise_->forward(input, middle_, training);
    pointwise_->forward(middle_, output, training);
  }

  void backward(const Tensor& input, const Tensor& output, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor> weight_gradients, bool grad_is_for_logits) override {
    // Gradients in Keras' weight order: depthwise, then pointwise and bias.
    pointwise_->backward(middle_, output, grad_output, &grad_middle_, weight_gradients.subspan(1), grad_is_for_logits);
    depthwise_->backward(input, middle_, grad_middle_, grad_input, weight_gradients.subspan(0, 1), false);
  }

  bool ends_in_softmax() const override { return pointwise_->ends_in_softmax(); }
  Tensor logits(const Tensor&) const override { return pointwise_->logits(middle_); }

  // The two run one after the other: one scratch serves both.
  size_t scratch_bytes() const override { return std::max(depthwise_->scratch_bytes(), pointwise_->scratch_bytes()); }
  void bind_scratch(std::byte* scratch) override {
    depthwise_->bind_scratch(scratch);
    pointwise_->bind_scratch(scratch);
  }

 private:
  std::unique_ptr<LayerStep> depthwise_, pointwise_;
  Tensor middle_, grad_middle_;
};

}  // namespace

SeparableConv2D::SeparableConv2D(const Conv2DOptions& options, int64_t depth_multiplier,
                                 Initializer pointwise_initializer)
    : Layer("separable_conv2d", options.name),
      options_(options),
      depth_multiplier_(depth_multiplier),
      pointwise_initializer_(std::move(pointwise_initializer)) {
  const std::string what = "SeparableConv2D '" + name() + "'";
  check_argument(options.filters > 0, what + ": filters must be positive, got " + std::to_string(options.filters));
  check_argument(depth_multiplier > 0, what + ": depth_multiplier must be positive, got " + std::to_string(depth_multiplier));
  const bool dilated = options.dilation_rate[0] > 1 || options.dilation_rate[1] > 1;
  const bool strided = options.strides[0] > 1 || options.strides[1] > 1;
  check_argument(!(dilated && strided), what + ": strides > 1 together with dilation_rate > 1 is not supported (nor in Keras)");
  kernels::parse_padding(options.padding);
  kernels::parse_activation(options.activation);
}

kernels::WindowGeometry SeparableConv2D::depthwise_geometry(const Shape& input_shape) const {
  check_argument(input_shape.rank() == 4, "SeparableConv2D '" + name() +
                                              "' expects inputs (batch, height, width, channels), got " +
                                              input_shape.to_string(true));
  const int64_t channels = input_shape[3];
  return kernels::make_window_geometry(input_shape[0], input_shape[1], input_shape[2], channels,
                                       channels * depth_multiplier_, options_.kernel_size[0], options_.kernel_size[1],
                                       options_.strides[0], options_.strides[1], kernels::parse_padding(options_.padding),
                                       options_.dilation_rate[0], options_.dilation_rate[1], channels);
}

kernels::WindowGeometry SeparableConv2D::pointwise_geometry(const Shape& input_shape) const {
  const kernels::WindowGeometry d = depthwise_geometry(input_shape);
  return kernels::make_window_geometry(d.batch, d.out_height, d.out_width, d.out_channels, options_.filters, 1, 1, 1, 1,
                                       kernels::Padding::valid);
}

Shape SeparableConv2D::compute_output_shape(const Shape& input_shape) const {
  const kernels::WindowGeometry g = pointwise_geometry(input_shape);
  return {input_shape[0], g.out_height, g.out_width, g.out_channels};
}

void SeparableConv2D::build_weights(const Shape& input_shape, Random& random) {
  const Shape shape = input_shape.with_batch(kernels::onednn::weight_layout_batch);
  const kernels::WindowGeometry d = depthwise_geometry(shape), p = pointwise_geometry(shape);
  depthwise_layout_ = std::make_shared<OnednnWeightLayout>(Conv2DKernel::keras_weights_desc(d),
                                                           Conv2DKernel::preferred_weights_desc(d));
  pointwise_layout_ = std::make_shared<OnednnWeightLayout>(Conv2DKernel::keras_weights_desc(p),
                                                           Conv2DKernel::preferred_weights_desc(p));
  add_weight("depthwise_kernel", {d.window_height, d.window_width, d.in_channels, depth_multiplier_},
             options_.kernel_initializer, random, depthwise_layout_);
  add_weight("pointwise_kernel", {1, 1, p.in_channels, p.out_channels}, pointwise_initializer_, random, pointwise_layout_);
  if (options_.use_bias) add_weight("bias", {p.out_channels}, options_.bias_initializer, random);
}

std::unique_ptr<LayerStep> SeparableConv2D::compile(const Shape& input_shape, const CompileOptions& options) {
  const kernels::WindowGeometry d = depthwise_geometry(input_shape), p = pointwise_geometry(input_shape);
  const std::vector<Variable*> all = weights();
  const auto& depthwise_layout = static_cast<const OnednnWeightLayout&>(*depthwise_layout_);
  const auto& pointwise_layout = static_cast<const OnednnWeightLayout&>(*pointwise_layout_);
  auto depthwise = std::make_unique<WeightedStep<Conv2DKernel>>(
      kernels::Activation::linear, d.batch * d.out_height * d.out_width, d.out_channels, std::vector<Variable*>{all[0]},
      DType::float32, [&](kernels::Activation fused, DType) {
        return Conv2DKernel(d, fused, false, depthwise_layout.native_desc(), options.need_input_gradient);
      });
  auto pointwise = std::make_unique<WeightedStep<Conv2DKernel>>(
      kernels::parse_activation(options_.activation), p.batch * p.out_height * p.out_width, p.out_channels,
      std::vector<Variable*>(all.begin() + 1, all.end()), DType::float32, [&](kernels::Activation fused, DType) {
        return Conv2DKernel(p, fused, options_.use_bias, pointwise_layout.native_desc(), true);
      });
  return std::make_unique<SeparableStep>(std::move(depthwise), std::move(pointwise),
                                         Shape{d.batch, d.out_height, d.out_width, d.out_channels});
}

nlohmann::json SeparableConv2D::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["filters"] = options_.filters;
  config["kernel_size"] = options_.kernel_size;
  config["strides"] = options_.strides;
  config["padding"] = options_.padding;
  config["data_format"] = "channels_last";
  config["dilation_rate"] = options_.dilation_rate;
  config["depth_multiplier"] = depth_multiplier_;
  config["activation"] = options_.activation;
  config["use_bias"] = options_.use_bias;
  config["depthwise_initializer"] = options_.kernel_initializer.get_config();
  config["pointwise_initializer"] = pointwise_initializer_.get_config();
  config["bias_initializer"] = options_.bias_initializer.get_config();
  for (const char* key : {"depthwise_regularizer", "pointwise_regularizer", "bias_regularizer", "activity_regularizer",
                          "depthwise_constraint", "pointwise_constraint", "bias_constraint"}) {
    config[key] = nullptr;
  }
  return config;
}

}  // namespace tenfold::layers
