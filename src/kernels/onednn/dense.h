#pragma once
// Dense on oneDNN's matmul: src [rows, in] x kernel [in, units] -> dst [rows, units], optional
// fused elementwise activation. The kernel stays in Keras' plain layout: the backward-data
// reads it transposed through a strided view, so no primitive needs a reordered copy. Against
// oneDNN's inner product with blocked weights (batch 256, 1 thread, forward / backward-data /
// backward-weights): 784->512 1.08 / 1.07 / 1.13 ms vs 1.46 / 1.55 / 1.72 ms; 5408->128
// 1.81 / 1.86 / 2.10 vs 1.76 / 1.93 / 2.41.
#include <memory>
#include <string>
#include <vector>

#include "kernels/onednn/activation.h"
#include "kernels/onednn/engine.h"

namespace tenfold::kernels::onednn {

class DenseKernel {
 public:
  /// `activation` must be fusable (not softmax). `need_diff_src` is false for a first layer.
  /// `dtype` is the activations' and their gradients' (float32 or bfloat16); the kernel, bias
  /// and their gradients are float32 either way (a bfloat16 copy of the kernel is made at
  /// each forward and read again by backward: one cast per step).
  DenseKernel(int64_t rows, int64_t in, int64_t units, Activation activation, bool use_bias,
              bool need_diff_src, DType dtype = DType::float32);

  /// src [rows, in], kernel [in, units], bias [units] or null -> dst [rows, units].
  void forward(const void* src, const float* kernel, const float* bias, void* dst);
  /// Backward through the activation (in place on diff_dst) and the product; diff_src may be
  /// null when need_diff_src was false; diff_bias is ignored without bias.
  void backward(const void* src, const void* dst, void* diff_dst, const float* kernel,
                void* diff_src, float* diff_kernel, float* diff_bias);
  /// The implementation oneDNN picked for each primitive, e.g. "forward brg:avx512_core".
  std::vector<std::string> implementations() const;

 private:
  /// The kernel as the primitives read it: itself, or its bfloat16 copy made by forward.
  const void* product_kernel(const float* kernel) const;

  int64_t rows_, units_, kernel_elements_;
  bool use_bias_;
  DType dtype_;
  std::shared_ptr<std::byte> bfloat16_kernel_;
  BoundPrimitive forward_, backward_data_, backward_weights_;
  ActivationKernel activation_;
  std::shared_ptr<std::byte> scratchpad_;
};

}  // namespace tenfold::kernels::onednn
