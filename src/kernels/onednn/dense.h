#pragma once
// Dense on oneDNN's matmul: src [rows, in] x kernel [in, units] -> dst [rows, units], optional
// fused elementwise activation. The kernel is stored in Keras' plain layout: the backward-data
// reads it transposed through a strided view. Against oneDNN's inner product with blocked
// weights (batch 256, 1 thread, forward / backward-data / backward-weights): 784->512 1.08 /
// 1.07 / 1.13 ms vs 1.46 / 1.55 / 1.72 ms; 5408->128 1.81 / 1.86 / 2.10 vs 1.76 / 1.93 / 2.41.
//
// Rows of a power-of-two number of bytes (units 512, 1024, 2048 in float32) fall in the same
// cache sets, and oneDNN 2.6's AVX2 gemm reads a right-hand operand of such rows at half to two
// thirds of its speed: 256x784 x 784x512 at 60-67 GFLOP/s, 97-99 with rows padded by one cache
// line; 256x3136 x 3136x1024 at 46, 95 padded (AMD EPYC, 1 thread). So the products may read
// the kernel (forward, backward-data) and diff_dst (backward-weights) from copies whose rows
// are padded: each copy is chosen when it is measured faster, its copying counted. Padded and
// plain products compute bitwise alike (checked at batch 256 on every op-table row), so the
// choice changes the speed only.
#include <memory>
#include <string>
#include <vector>

#include "kernels/onednn/activation.h"
#include "kernels/onednn/engine.h"

namespace tenfold::kernels::onednn {

class DenseKernel {
 public:
  /// Whether the products read padded copies of the kernel's and diff_dst's rows: `chosen`
  /// by measurement (once per process and shape), or forced (tests).
  enum class RowPadding { chosen, none, padded };

  /// `activation` must be fusable (not softmax). `need_diff_src` is false for a first layer.
  /// `dtype` is the activations' and their gradients' (float32 or bfloat16); the kernel, bias
  /// and their gradients are float32 either way (a bfloat16 copy of the kernel is made at
  /// each forward and read again by backward: one cast per step).
  DenseKernel(int64_t rows, int64_t in, int64_t units, Activation activation, bool use_bias,
              bool need_diff_src, DType dtype = DType::float32, RowPadding padding = RowPadding::chosen);

  /// src [rows, in], kernel [in, units], bias [units] or null -> dst [rows, units].
  void forward(const void* src, const float* kernel, const float* bias, void* dst);
  /// Backward through the activation (in place on diff_dst) and the product; diff_src may be
  /// null when need_diff_src was false; diff_bias is ignored without bias.
  void backward(const void* src, const void* dst, void* diff_dst, const float* kernel,
                void* diff_src, float* diff_kernel, float* diff_bias);
  /// The implementation oneDNN picked for each primitive, e.g. "forward brg:avx512_core", and
  /// which operands are read from padded rows.
  std::vector<std::string> implementations() const;

 private:
  /// The three products for given row strides (in elements) of the kernel and diff_dst.
  struct Products {
    int64_t kernel_stride = 0, diff_dst_stride = 0;
    WeightsForPrimitive kernel;  // the stored kernel as the products read it
    BoundPrimitive forward, backward_data, backward_weights;
    BoundPrimitive pad_diff_dst;  // diff_dst into padded_diff_dst, when its rows are padded
    std::shared_ptr<std::byte> padded_diff_dst;
    size_t scratchpad_bytes() const;
  };
  Products products(int64_t kernel_stride, int64_t diff_dst_stride) const;
  /// Whether `padded` is clearly faster than `plain` at forward and backward-data (`kernel`)
  /// or at backward-weights, timed on zeros.
  bool clearly_faster(Products& padded, Products& plain, bool kernel) const;
  void run_forward(Products& p, const void* src, const float* kernel, const float* bias, void* dst,
                   void* scratchpad) const;
  /// Backward-weights from diff_dst (copied into padded rows first when `p` reads them so).
  void run_backward_weights(Products& p, const void* src, const void* diff_dst, float* diff_kernel,
                            void* scratchpad) const;

  int64_t rows_, in_, units_;
  Activation activation_type_;
  bool use_bias_, need_diff_src_;
  DType dtype_;
  Products products_;
  ActivationKernel activation_;
  std::shared_ptr<std::byte> scratchpad_;
};

}  // namespace tenfold::kernels::onednn
