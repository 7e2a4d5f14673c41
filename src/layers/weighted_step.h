#pragma once
// What Conv2D and Dense share: a kernel with weights and an optional bias, followed by an
// output activation (fused into the kernel, or a softmax after it).
#include <nlohmann/json.hpp>

#include "layers/initializers.h"
#include "layers/output_activation.h"

namespace tenfold {

/// `Kernel` has forward(src, weights, bias, dst) and
/// backward(src, dst, diff_dst, weights, diff_src, diff_weights, diff_bias).
template <typename Kernel>
class WeightedStep : public LayerStep {
 public:
  /// The output is seen as [rows, channels]; `make_kernel(fused_activation, dtype)` builds the
  /// kernel. It computes in `dtype` when that is float32 or the activation fuses into the
  /// kernel (one that runs after it is a float32 kernel), else in float32. With
  /// `activation_after_kernel`, a fusable activation runs after the kernel too.
  template <typename MakeKernel>
  WeightedStep(kernels::Activation activation, int64_t rows, int64_t channels,
               std::vector<Variable*> weights, DType dtype, MakeKernel make_kernel,
               bool activation_after_kernel = false)
      : activation_(activation, rows, channels, activation_after_kernel),
        dtype_(activation_.fused().kind == activation.kind ? dtype : DType::float32),
        kernel_(make_kernel(activation_.fused(), dtype_)),
        weights_(std::move(weights)) {}

  DType compute_dtype() const override { return dtype_; }

  void forward(const Tensor& input, Tensor& output, bool) override {
    kernel_.forward(input.raw_data(), weights_[0]->value().data<float>(), bias(),
                    activation_.kernel_output(output));
    activation_.forward(output);
  }

  void backward(const Tensor& input, const Tensor& output, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor> weight_gradients, bool grad_is_for_logits) override {
    activation_.backward(output, grad_output, grad_is_for_logits);
    kernel_.backward(input.raw_data(), activation_.kernel_output(output),
                     grad_output.raw_data(), weights_[0]->value().data<float>(),
                     grad_input ? grad_input->raw_data() : nullptr,
                     weight_gradients[0].data<float>(),
                     weights_.size() > 1 ? weight_gradients[1].data<float>() : nullptr);
  }

  bool ends_in_softmax() const override { return activation_.is_softmax(); }
  Tensor logits(const Tensor&) const override { return activation_.logits(); }

  size_t scratch_bytes() const override {
    if constexpr (requires { kernel_.scratch_bytes(); }) return kernel_.scratch_bytes();
    return 0;
  }
  void bind_scratch(std::byte* scratch) override {
    if constexpr (requires { kernel_.bind_scratch(scratch); }) kernel_.bind_scratch(scratch);
  }

 private:
  const float* bias() const {
    return weights_.size() > 1 ? weights_[1]->value().data<float>() : nullptr;
  }

  OutputActivation activation_;
  DType dtype_;
  Kernel kernel_;
  std::vector<Variable*> weights_;
};

/// Adds the config keys Conv2D and Dense share: activation, use_bias, initializers, and the
/// regularizers and constraints (null: Tenfold has none).
void add_weighted_config(nlohmann::json& config, const std::string& activation, bool use_bias,
                         const Initializer& kernel_initializer, const Initializer& bias_initializer);

}  // namespace tenfold
