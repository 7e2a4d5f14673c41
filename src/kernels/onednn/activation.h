#pragma once
// Activations: elementwise ones on oneDNN's eltwise kernels (or, for those oneDNN 2.6 lacks:
// selu, softsign, hard_sigmoid, on a plain loop), softmax and log_softmax over the last axis
// (forward on oneDNN's kernel, backward on Tenfold's rows).
// Convolution and dense kernels fuse the activations whose backward needs only their output
// (backward_from_output) as a post-op and use this kernel only for the backward; the others
// (and tanh where oneDNN's is slow: runs_faster_after_kernel) run after the kernel, from a copy
// of its output.
#include <memory>
#include <string>
#include <vector>

#include "kernels/onednn/engine.h"
#include "kernels/window.h"

namespace tenfold::kernels::onednn {

/// Whether the kernel runs `activation` on bfloat16 data: the elementwise ones on oneDNN's
/// kernels (linear included; not softmax, whose sums stay float32, nor the plain loops).
bool runs_in_bfloat16(const Activation& activation);
/// Whether `activation` can run as a post-op of a convolution or matmul.
bool fusable_as_post_op(const Activation& activation);
/// The post-op for a fusable activation (empty for linear).
dnnl::post_ops activation_post_ops(const Activation& activation);
/// Whether a fusable `activation` at the end of a kernel computing in `dtype` runs faster after
/// it (ActivationKernel) than as its oneDNN post-op: tanh in float32 where oneDNN's is clearly
/// slower than TensorFlow's rational function that ActivationKernel runs (timed once per
/// process, each alone on 64k values: the pass over memory that running after adds is not
/// timed, and the 2x asked for covers it).
bool runs_faster_after_kernel(const Activation& activation, DType dtype);

class ActivationKernel {
 public:
  ActivationKernel() = default;
  /// Over data seen as [rows, columns] of `data_type` (f32, or bf16 for the activations oneDNN
  /// runs); softmax and log_softmax normalise each row.
  ActivationKernel(const Activation& activation, int64_t rows, int64_t columns,
                   memory::data_type data_type = memory::data_type::f32);

  const Activation& activation() const { return activation_; }
  /// src -> dst (may alias).
  void forward(const void* src, void* dst);
  /// diff_src from the forward's input `src` (may be null when backward_from_output), its
  /// output `dst` and diff_dst (may alias diff_src).
  void backward(const void* src, const void* dst, const void* diff_dst, void* diff_src);
  /// The implementation picked for each primitive (none for a linear activation).
  std::vector<std::string> implementations() const;

 private:
  int64_t count() const { return rows_ * columns_; }

  Activation activation_;
  int64_t rows_ = 0, columns_ = 0;
  size_t element_bytes_ = sizeof(float);
  bool plain_loop_ = false;  // an activation oneDNN 2.6 has no kernel for
  bool own_tanh_forward_ = false;  // float32 tanh: TensorFlow's rational function, vectorized
  BoundPrimitive forward_;
  BoundPrimitive backward_;
  std::shared_ptr<std::byte> scratchpad_;
};

}  // namespace tenfold::kernels::onednn
