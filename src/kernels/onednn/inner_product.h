#pragma once
// Dense (inner product) on oneDNN: src [rows, in] -> dst [rows, units], weights in the layout
// oneDNN chooses, optional fused elementwise activation.
#include <memory>
#include <string>
#include <vector>

#include "kernels/onednn/activation.h"
#include "kernels/onednn/engine.h"

namespace tenfold::kernels::onednn {

class InnerProductKernel {
 public:
  static memory::desc preferred_weights_desc(int64_t rows, int64_t in, int64_t units);
  /// Keras' layout of the same weights: [in, units].
  static memory::desc keras_weights_desc(int64_t in, int64_t units);

  InnerProductKernel(int64_t rows, int64_t in, int64_t units, Activation activation, bool use_bias,
                     const memory::desc& stored_weights, bool need_diff_src);

  /// The implementation oneDNN picked for each primitive, e.g. "forward brgemm:avx512_core".
  std::vector<std::string> implementations() const;

  void forward(const float* src, const float* weights, const float* bias, float* dst);
  /// Backward through activation (in place on diff_dst) and the product; diff_src may be null.
  void backward(const float* src, const float* dst, float* diff_dst, const float* weights,
                float* diff_src, float* diff_weights, float* diff_bias);

 private:
  bool use_bias_;
  BoundPrimitive forward_, backward_data_, backward_weights_;
  WeightsForPrimitive forward_weights_, backward_data_weights_;
  ActivationKernel activation_;
  std::shared_ptr<std::byte> scratchpad_;
};

}  // namespace tenfold::kernels::onednn
