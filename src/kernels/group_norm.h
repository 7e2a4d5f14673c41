#pragma once
// Group normalization over data seen as [samples, positions, channels] with the channels in
// `groups` equal groups: each sample's group (its positions x channels of the group) is
// normalised with its own mean and biased variance, y = (x - mean) / sqrt(variance +
// epsilon) * gamma + beta, gamma and beta per channel. Keras' GroupNormalization; its
// LayerNormalization over the last axis is the case of one position and one group, with each
// row a sample. Samples are independent, so the work is split over them; each sums per channel
// over its positions (contiguous, vectorized loops) and then per group, in double; gamma's and
// beta's gradients (sums over rows) accumulate in double over fixed chunks of rows: the same
// result on any number of threads.
#include <cstdint>
#include <vector>

#include "kernels/column_sums.h"

namespace tenfold::kernels {

class GroupNormKernel {
 public:
  GroupNormKernel(int64_t samples, int64_t positions, int64_t channels, int64_t groups, double epsilon);

  /// gamma null is 1, beta null is 0. Keeps each group's mean and 1 / sqrt(variance +
  /// epsilon) for backward.
  void forward(const float* src, const float* gamma, const float* beta, float* dst);
  /// Gradients of the last forward (same src); diff_src, diff_gamma and diff_beta may each be
  /// null.
  void backward(const float* src, const float* diff_dst, const float* gamma, float* diff_src,
                float* diff_gamma, float* diff_beta);

 private:
  int64_t samples_, positions_, channels_, groups_, group_channels_;
  double epsilon_;
  std::vector<float> mean_, inverse_std_;  // per (sample, group), from the last forward
  ChunkedColumnSums column_sums_;           // diff_gamma and diff_beta
  std::vector<double> sums_;
};

}  // namespace tenfold::kernels
