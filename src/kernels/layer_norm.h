#pragma once
// Layer normalization over the last axis of data seen as [rows, channels]: each row is
// normalised with its own mean and biased variance, y = (x - mean) / sqrt(variance + epsilon)
// * gamma + beta (Keras' LayerNormalization). Rows are independent, so the work is split over
// rows; the row statistics accumulate in double, and gamma's and beta's gradients (sums over
// rows) in double over fixed chunks of rows: the same result on any number of threads.
#include <cstdint>
#include <vector>

#include "kernels/column_sums.h"

namespace tenfold::kernels {

class LayerNormKernel {
 public:
  LayerNormKernel(int64_t rows, int64_t channels, double epsilon);

  /// gamma null is 1, beta null is 0. Keeps each row's mean and 1 / sqrt(variance + epsilon)
  /// for backward.
  void forward(const float* src, const float* gamma, const float* beta, float* dst);
  /// Gradients of the last forward (same src); diff_src, diff_gamma and diff_beta may each be
  /// null.
  void backward(const float* src, const float* diff_dst, const float* gamma, float* diff_src,
                float* diff_gamma, float* diff_beta);

 private:
  int64_t rows_, channels_;
  double epsilon_;
  std::vector<float> mean_, inverse_std_;  // per row, from the last forward
  ChunkedColumnSums column_sums_;           // diff_gamma and diff_beta
  std::vector<double> sums_;
};

}  // namespace tenfold::kernels
