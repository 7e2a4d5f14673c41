#pragma once
// The activation at the end of a Conv2D or Dense layer. Elementwise activations are fused into
// the layer's kernel; softmax is not fusable, so the kernel writes logits to a buffer of this
// object and the softmax runs after it.
#include "kernels/onednn/activation.h"
#include "layers/layer.h"

namespace tenfold {

class OutputActivation {
 public:
  /// Over an output seen as [rows, channels].
  OutputActivation(kernels::Activation activation, int64_t rows, int64_t channels);

  /// What the layer's kernel fuses: the activation itself, or linear before a softmax.
  kernels::Activation fused() const;
  bool is_softmax() const { return softmax_.activation() == kernels::Activation::softmax; }
  /// Where the kernel writes: the logits buffer before a softmax, else the output itself.
  float* kernel_output(Tensor& output) { return is_softmax() ? logits_.data<float>() : output.data<float>(); }
  const float* kernel_output(const Tensor& output) const {
    return is_softmax() ? logits_.data<float>() : output.data<float>();
  }
  /// Applies the softmax, logits -> output (nothing for fused activations).
  void forward(Tensor& output);
  /// Softmax backward in place on grad_output, unless it is already for the logits.
  void backward(const Tensor& output, Tensor& grad_output, bool grad_is_for_logits);
  const Tensor& logits() const { return logits_; }

 private:
  kernels::Activation activation_;
  kernels::onednn::ActivationKernel softmax_;
  Tensor logits_;
};

}  // namespace tenfold
