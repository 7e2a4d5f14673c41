#include "layers/output_activation.h"

namespace tenfold {

using kernels::Activation;

OutputActivation::OutputActivation(Activation activation, int64_t rows, int64_t channels)
    : activation_(activation) {
  if (activation == Activation::softmax) {
    softmax_ = kernels::onednn::ActivationKernel(Activation::softmax, rows, channels);
    logits_ = Tensor(Shape{rows, channels});
  }
}

Activation OutputActivation::fused() const {
  return is_softmax() ? Activation::linear : activation_;
}

void OutputActivation::forward(Tensor& output) {
  if (is_softmax()) softmax_.forward(logits_.data<float>(), output.data<float>());
}

void OutputActivation::backward(const Tensor& output, Tensor& grad_output,
                                bool grad_is_for_logits) {
  if (is_softmax() && !grad_is_for_logits) {
    softmax_.backward(output.data<float>(), grad_output.data<float>(), grad_output.data<float>());
  }
}

}  // namespace tenfold
