#pragma once
// Activations on oneDNN: elementwise (relu, sigmoid, tanh) and softmax over the last axis, with
// backward from the output. Convolution and dense kernels fuse the elementwise ones into their
// forward primitive as a post-op and use this kernel only for the backward.
#include <memory>
#include <string>
#include <vector>

#include "kernels/onednn/engine.h"
#include "kernels/window.h"

namespace tenfold::kernels::onednn {

/// Whether `activation` can run as a post-op of a convolution or matmul.
bool fusable_as_post_op(Activation activation);
/// The post-op for a fusable activation (empty for linear).
dnnl::post_ops activation_post_ops(Activation activation);

class ActivationKernel {
 public:
  ActivationKernel() = default;
  /// Over data seen as [rows, columns]; softmax normalises each row.
  ActivationKernel(Activation activation, int64_t rows, int64_t columns);

  Activation activation() const { return activation_; }
  /// src -> dst (may alias).
  void forward(const float* src, float* dst);
  /// diff_src from the forward output and diff_dst (may alias diff_src).
  void backward(const float* dst, const float* diff_dst, float* diff_src);
  /// The implementation oneDNN picked for each primitive (none for a linear activation).
  std::vector<std::string> implementations() const;

 private:
  Activation activation_ = Activation::linear;
  int64_t count_ = 0;
  BoundPrimitive forward_;
  BoundPrimitive backward_;
  std::shared_ptr<std::byte> scratchpad_;
};

}  // namespace tenfold::kernels::onednn
