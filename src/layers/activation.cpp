#include "layers/activation.h"

#include <cstring>

#include "kernels/onednn/activation.h"

namespace tenfold::layers {

namespace {

class ActivationStep : public LayerStep {
 public:
  ActivationStep(kernels::Activation activation, const Shape& shape)
      : kernel_(activation, shape.num_elements() / shape[shape.rank() - 1], shape[shape.rank() - 1]) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    kernel_.forward(input.data<float>(), output.data<float>());
  }

  void backward(const Tensor&, const Tensor& output, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool grad_is_for_logits) override {
    if (!grad_input) return;
    if (grad_is_for_logits) {  // the loss already differentiated through the softmax
      std::memcpy(grad_input->raw_data(), grad_output.raw_data(), grad_output.num_bytes());
      return;
    }
    kernel_.backward(output.data<float>(), grad_output.data<float>(), grad_input->data<float>());
  }

  bool ends_in_softmax() const override {
    return kernel_.activation() == kernels::Activation::softmax;
  }

 private:
  kernels::onednn::ActivationKernel kernel_;
};

}  // namespace

Activation::Activation(const std::string& activation, const std::string& name)
    : Activation(kernels::parse_activation(activation), "activation", name) {}

Activation::Activation(kernels::Activation activation, const std::string& snake_name,
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

ReLU::ReLU(const std::string& name) : Activation(kernels::Activation::relu, "re_lu", name) {}

nlohmann::json ReLU::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["max_value"] = nullptr;
  config["negative_slope"] = 0.0;
  config["threshold"] = 0.0;
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
