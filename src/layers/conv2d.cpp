#include "layers/conv2d.h"

#include "core/error.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/onednn/weight_layout.h"
#include "layers/output_activation.h"

namespace tenfold::layers {

namespace {

using kernels::onednn::Conv2DKernel;
using kernels::onednn::OnednnWeightLayout;

// NOTE: oneDNN picks the weight layout for a representative batch once, at build; every
// batch size then runs with that layout.
constexpr int64_t layout_batch = 256;

class Conv2DStep : public LayerStep {
 public:
  Conv2DStep(const kernels::WindowGeometry& g, kernels::Activation activation, bool use_bias,
             const OnednnWeightLayout& layout, std::vector<Variable*> weights,
             bool need_input_gradient)
      : activation_(activation, g.batch * g.out_height * g.out_width, g.out_channels),
        kernel_(g, activation_.fused(), use_bias, layout.native_desc(), need_input_gradient),
        weights_(std::move(weights)) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    kernel_.forward(input.data<float>(), weights_[0]->value().data<float>(), bias(),
                    activation_.kernel_output(output));
    activation_.forward(output);
  }

  void backward(const Tensor& input, const Tensor& output, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor> weight_gradients, bool grad_is_for_logits) override {
    activation_.backward(output, grad_output, grad_is_for_logits);
    kernel_.backward(input.data<float>(), activation_.kernel_output(output),
                     grad_output.data<float>(), weights_[0]->value().data<float>(),
                     grad_input ? grad_input->data<float>() : nullptr,
                     weight_gradients[0].data<float>(),
                     weights_.size() > 1 ? weight_gradients[1].data<float>() : nullptr);
  }

  bool ends_in_softmax() const override { return activation_.is_softmax(); }
  Tensor logits(const Tensor&) const override { return activation_.logits(); }

 private:
  const float* bias() const {
    return weights_.size() > 1 ? weights_[1]->value().data<float>() : nullptr;
  }

  OutputActivation activation_;
  Conv2DKernel kernel_;
  std::vector<Variable*> weights_;
};

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

std::unique_ptr<LayerStep> Conv2D::compile(const Shape& input_shape, bool need_input_gradient) {
  return std::make_unique<Conv2DStep>(
      geometry(input_shape), activation_, options_.use_bias,
      static_cast<const OnednnWeightLayout&>(*kernel_layout_), weights(), need_input_gradient);
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
  config["activation"] = options_.activation;
  config["use_bias"] = options_.use_bias;
  config["kernel_initializer"] = Initializer(options_.kernel_initializer).get_config();
  config["bias_initializer"] = Initializer(options_.bias_initializer).get_config();
  config["kernel_regularizer"] = nullptr;
  config["bias_regularizer"] = nullptr;
  config["activity_regularizer"] = nullptr;
  config["kernel_constraint"] = nullptr;
  config["bias_constraint"] = nullptr;
  return config;
}

}  // namespace tenfold::layers
