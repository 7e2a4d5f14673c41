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
  DenseKernel(int64_t rows, int64_t in, int64_t units, Activation activation, bool use_bias,
              bool need_diff_src);

  /// src [rows, in], kernel [in, units], bias [units] or null -> dst [rows, units].
  void forward(const float* src, const float* kernel, const float* bias, float* dst);
  /// Backward through the activation (in place on diff_dst) and the product; diff_src may be
  /// null when need_diff_src was false; diff_bias is ignored without bias.
  void backward(const float* src, const float* dst, float* diff_dst, const float* kernel,
                float* diff_src, float* diff_kernel, float* diff_bias);
  /// The implementation oneDNN picked for each primitive, e.g. "forward brg:avx512_core".
  std::vector<std::string> implementations() const;

 private:
  int64_t rows_, units_;
  bool use_bias_;
  BoundPrimitive forward_, backward_data_, backward_weights_;
  ActivationKernel activation_;
  std::shared_ptr<std::byte> scratchpad_;
};

}  // namespace tenfold::kernels::onednn
