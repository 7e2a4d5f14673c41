#include "layers/activation.h"

#include <cstring>

#include "core/error.h"
#include "kernels/onednn/activation.h"

namespace tenfold::layers {

namespace {

class ActivationStep : public LayerStep {
 public:
  ActivationStep(const kernels::Activation& activation, const Shape& shape)
      : kernel_(activation, shape.num_elements() / shape[shape.rank() - 1], shape[shape.rank() - 1]) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    kernel_.forward(input.data<float>(), output.data<float>());
  }

  void backward(const Tensor& input, const Tensor& output, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool grad_is_for_logits) override {
    if (!grad_input) return;
    if (grad_is_for_logits) {  // the loss already differentiated through the softmax
      std::memcpy(grad_input->raw_data(), grad_output.raw_data(), grad_output.num_bytes());
      return;
    }
    kernel_.backward(input.data<float>(), output.data<float>(), grad_output.data<float>(),
                     grad_input->data<float>());
  }

  bool ends_in_softmax() const override {
    return kernel_.activation().kind == kernels::Activation::softmax;
  }

 private:
  kernels::onednn::ActivationKernel kernel_;
};

kernels::Activation relu(std::optional<double> max_value, double negative_slope) {
  kernels::Activation activation(kernels::Activation::relu);
  check_argument(negative_slope >= 0, "ReLU negative_slope must be >= 0, got " + std::to_string(negative_slope));
  check_argument(!max_value || *max_value > 0, "ReLU max_value must be positive");
  check_argument(!max_value || negative_slope == 0,
                 "ReLU with both max_value and negative_slope is not implemented; use one of them");
  activation.alpha = float(negative_slope);
  if (max_value) activation.max_value = float(*max_value);
  return activation;
}

kernels::Activation elu(double alpha) {
  kernels::Activation activation(kernels::Activation::elu);
  activation.alpha = float(alpha);
  return activation;
}

}  // namespace

Activation::Activation(const std::string& activation, const std::string& name)
    : Activation(kernels::parse_activation(activation), "activation", name) {}

Activation::Activation(const kernels::Activation& activation, const std::string& snake_name,
                       const std::string& name)
    : Layer(snake_name, name), activation_(activation) {}

std::unique_ptr<LayerStep> Activation::compile(const Shape& input_shape, const CompileOptions&) {
  return std::make_unique<ActivationStep>(activation_, input_shape);
}

nlohmann::json Activation::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["activation"] = kernels::activation_name(activation_);
  return config;
}

ReLU::ReLU(std::optional<double> max_value, double negative_slope, const std::string& name)
    : Activation(relu(max_value, negative_slope), "re_lu", name),
      max_value_(max_value),
      negative_slope_(negative_slope) {}

nlohmann::json ReLU::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["max_value"] = max_value_ ? nlohmann::json(*max_value_) : nlohmann::json(nullptr);
  config["negative_slope"] = negative_slope_;
  config["threshold"] = 0.0;
  return config;
}

LeakyReLU::LeakyReLU(double negative_slope, const std::string& name)
    : Activation(relu(std::nullopt, negative_slope), "leaky_re_lu", name), negative_slope_(negative_slope) {}

nlohmann::json LeakyReLU::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["negative_slope"] = negative_slope_;
  return config;
}

ELU::ELU(double alpha, const std::string& name) : Activation(elu(alpha), "elu", name), alpha_(alpha) {}

nlohmann::json ELU::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["alpha"] = alpha_;
  return config;
}

Softmax::Softmax(const std::string& name)
    : Activation(kernels::Activation::softmax, "softmax", name) {}

nlohmann::json Softmax::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["axis"] = -1;
  return config;
}

}  // namespace tenfold::layers
