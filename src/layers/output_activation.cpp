#include "layers/output_activation.h"

namespace tenfold {

using kernels::Activation;

OutputActivation::OutputActivation(const Activation& activation, int64_t rows, int64_t channels, bool after_kernel)
    : activation_(activation) {
  if (!kernels::onednn::fusable_as_post_op(activation) || after_kernel) {
    after_ = kernels::onednn::ActivationKernel(activation, rows, channels);
    pre_activation_ = Tensor(Shape{rows, channels});
  }
}

Activation OutputActivation::fused() const { return runs_after() ? Activation::linear : activation_; }

void OutputActivation::forward(Tensor& output) {
  if (runs_after()) after_.forward(pre_activation_.data<float>(), output.data<float>());
}

void OutputActivation::backward(const Tensor& output, Tensor& grad_output, bool grad_is_for_logits) {
  if (runs_after() && !(is_softmax() && grad_is_for_logits)) {
    after_.backward(pre_activation_.data<float>(), output.data<float>(), grad_output.data<float>(),
                    grad_output.data<float>());
  }
}

}  // namespace tenfold
