#pragma once
// The activation at the end of a Conv2D or Dense layer. Those whose backward needs only their
// output are fused into the layer's kernel, unless told to run after it; the others (softmax,
// gelu, ...) are not: the kernel writes its output to a buffer of this object and the
// activation runs after it, in float32.
#include "kernels/onednn/activation.h"
#include "layers/layer.h"

namespace tenfold {

class OutputActivation {
 public:
  /// Over an output seen as [rows, channels]; `after_kernel` runs a fusable activation after the
  /// kernel too (float32 tanh where oneDNN's is slow: kernels::onednn::runs_faster_after_kernel).
  OutputActivation(const kernels::Activation& activation, int64_t rows, int64_t channels, bool after_kernel = false);

  /// What the layer's kernel fuses: the activation itself, or linear before one that runs after.
  kernels::Activation fused() const;
  bool is_softmax() const { return after_.activation().kind == kernels::Activation::softmax; }
  /// Where the kernel writes: the buffer before an activation that runs after, else the output.
  void* kernel_output(Tensor& output) { return runs_after() ? pre_activation_.raw_data() : output.raw_data(); }
  const void* kernel_output(const Tensor& output) const {
    return runs_after() ? pre_activation_.raw_data() : output.raw_data();
  }
  /// Applies an activation that runs after the kernel, buffer -> output (nothing when fused).
  void forward(Tensor& output);
  /// Its backward in place on grad_output, unless grad_output is already for the logits of
  /// a softmax.
  void backward(const Tensor& output, Tensor& grad_output, bool grad_is_for_logits);
  /// The softmax's input (see LayerStep::logits).
  const Tensor& logits() const { return pre_activation_; }

 private:
  bool runs_after() const { return !pre_activation_.empty(); }

  kernels::Activation activation_;
  kernels::onednn::ActivationKernel after_;
  Tensor pre_activation_;
};

}  // namespace tenfold
