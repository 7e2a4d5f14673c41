#include "layers/dense.h"

#include "core/error.h"
#include "kernels/onednn/inner_product.h"
#include "kernels/onednn/weight_layout.h"
#include "layers/output_activation.h"

namespace tenfold::layers {

namespace {

using kernels::onednn::InnerProductKernel;
using kernels::onednn::OnednnWeightLayout;

constexpr int64_t layout_rows = 256;  // see the NOTE in conv2d.cpp

class DenseStep : public LayerStep {
 public:
  DenseStep(int64_t rows, int64_t in, int64_t units, kernels::Activation activation,
            bool use_bias, const OnednnWeightLayout& layout, std::vector<Variable*> weights,
            bool need_input_gradient)
      : activation_(activation, rows, units),
        kernel_(rows, in, units, activation_.fused(), use_bias, layout.native_desc(),
                need_input_gradient),
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
  InnerProductKernel kernel_;
  std::vector<Variable*> weights_;
};

}  // namespace

Dense::Dense(const DenseOptions& options)
    : Layer("dense", options.name),
      options_(options),
      activation_(kernels::parse_activation(options.activation)) {
  check_argument(options.units > 0,
                 "Dense units must be positive, got " + std::to_string(options.units));
  Initializer(options.kernel_initializer);  // validates the names early
  Initializer(options.bias_initializer);
}

Shape Dense::compute_output_shape(const Shape& input_shape) const {
  check_argument(input_shape.rank() >= 2, "Dense '" + name() +
                                              "' expects inputs of rank 2 or more, got " +
                                              input_shape.to_string(true));
  Shape output = input_shape;
  output[output.rank() - 1] = options_.units;
  return output;
}

void Dense::build_weights(const Shape& input_shape, Random& random) {
  compute_output_shape(input_shape);  // validates the rank
  int64_t in = input_shape[input_shape.rank() - 1];
  kernel_layout_ = std::make_shared<OnednnWeightLayout>(
      InnerProductKernel::keras_weights_desc(in, options_.units),
      InnerProductKernel::preferred_weights_desc(layout_rows, in, options_.units));
  add_weight("kernel", {in, options_.units}, Initializer(options_.kernel_initializer), random,
             kernel_layout_);
  if (options_.use_bias) {
    add_weight("bias", {options_.units}, Initializer(options_.bias_initializer), random);
  }
}

std::unique_ptr<LayerStep> Dense::compile(const Shape& input_shape, bool need_input_gradient) {
  int64_t in = input_shape[input_shape.rank() - 1];
  int64_t rows = input_shape.num_elements() / in;
  return std::make_unique<DenseStep>(rows, in, options_.units, activation_, options_.use_bias,
                                     static_cast<const OnednnWeightLayout&>(*kernel_layout_),
                                     weights(), need_input_gradient);
}

nlohmann::json Dense::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["units"] = options_.units;
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
