#pragma once
// Dense on oneDNN's matmul: src [rows, in] x kernel [in, units] -> dst [rows, units], optional
// fused elementwise activation. The kernel is stored in Keras' plain layout: the backward-data
// reads it transposed through a strided view. Against oneDNN's inner product with blocked
// weights (batch 256, 1 thread, forward / backward-data / backward-weights): 784->512 1.08 /
// 1.07 / 1.13 ms vs 1.46 / 1.55 / 1.72 ms; 5408->128 1.81 / 1.86 / 2.10 vs 1.76 / 1.93 / 2.41.
//
// Rows of a multiple of 1 KiB (512, 1024, 9216 floats) start at addresses equal in their low
// bits, and oneDNN 2.6's AVX2 gemm reads a right-hand operand, or a transposed left-hand one, of
// such rows at a third to two thirds of its speed when they are 64-byte aligned as Tenfold
// allocates them (at malloc's addresses, 16 bytes past a page, the same products ran at full
// speed: address aliasing, not arithmetic). Per call in ms, rows as stored -> padded by one
// cache line (`OMP_NUM_THREADS=1 tenfold-bench-dense --in I --units U`, 256 rows, AMD EPYC):
// 3136->1024 forward 36.8 -> 18.5; 512->512 forward 2.04 -> 1.45, backward 3.87 -> 3.01;
// 9216->128 backward 21.8 -> 15.0. So the products may read the kernel (forward, backward-data),
// src and diff_dst (backward-weights) from copies with padded rows, in float32: the kernel's
// copy when forward and backward-data are measured faster with it, src's and diff_dst's when
// backward-weights is, their copying counted. On that CPU padded and plain products computed
// bitwise alike (batch 256, every op-table row); the op-table checks both against the
// reference kernel everywhere.
#include <memory>
#include <string>
#include <vector>

#include "kernels/onednn/activation.h"
#include "kernels/onednn/engine.h"

namespace tenfold::kernels::onednn {

class DenseKernel {
 public:
  /// Whether the products read padded copies of the kernel's, src's and diff_dst's rows:
  /// `chosen` (float32 operands whose rows alias, by a timing once per process and shape;
  /// otherwise none), or forced (tests).
  enum class RowPadding { chosen, none, padded };

  /// `activation` must be fusable (not softmax). `need_diff_src` is false for a first layer.
  /// `dtype` is the activations' and their gradients' (float32 or bfloat16); the kernel, bias
  /// and their gradients are float32 either way (a bfloat16 copy of the kernel is made at
  /// each forward and read again by backward: one cast per step).
  DenseKernel(int64_t rows, int64_t in, int64_t units, Activation activation, bool use_bias,
              bool need_diff_src, DType dtype = DType::float32, RowPadding padding = RowPadding::chosen);

  /// src [rows, in], kernel [in, units], bias [units] or null -> dst [rows, units].
  void forward(const void* src, const float* kernel, const float* bias, void* dst);
  /// Backward through the activation (in place on diff_dst) and the product, after a forward
  /// with the same kernel (backward-data reads the copy forward made, when there is one);
  /// diff_src may be null when need_diff_src was false; diff_bias is ignored without bias.
  void backward(const void* src, const void* dst, void* diff_dst, const float* kernel,
                void* diff_src, float* diff_kernel, float* diff_bias);
  /// The implementation oneDNN picked for each primitive, e.g. "forward brg:avx512_core", and
  /// which operands are read from padded rows.
  std::vector<std::string> implementations() const;

 private:
  /// Elements from one row's start to the next's, as the products read each operand.
  struct RowStrides {
    int64_t kernel, src, diff_dst;
  };
  /// The three products for given row strides: src's and diff_dst's for backward-weights only.
  struct Products {
    RowStrides strides{};
    WeightsForPrimitive kernel;  // the stored kernel as the products read it
    BoundPrimitive forward, backward_data, backward_weights;
    std::shared_ptr<std::byte> padded_src, padded_diff_dst;  // backward-weights' copies, if padded
    size_t scratchpad_bytes() const;
  };
  Products products(RowStrides strides) const;
  enum class Timed { forward_and_backward_data, backward_weights };
  /// Whether `padded` is clearly faster than `plain` at the `timed` products, timed on zeros.
  bool clearly_faster(Products& padded, Products& plain, Timed timed) const;
  void run_forward(Products& p, const void* src, const float* kernel, const float* bias, void* dst,
                   void* scratchpad) const;
  /// Backward-weights from src and diff_dst, copied into padded rows first where `p` reads them so.
  void run_backward_weights(Products& p, const void* src, const void* diff_dst, float* diff_kernel,
                            void* scratchpad) const;

  int64_t rows_, in_, units_;
  Activation fused_activation_;
  bool use_bias_, need_diff_src_;
  DType dtype_;
  Products products_;
  ActivationKernel activation_;
  std::shared_ptr<std::byte> scratchpad_;
};

}  // namespace tenfold::kernels::onednn
