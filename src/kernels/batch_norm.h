#pragma once
// Batch normalization over channels-last data seen as [rows, channels] (every axis but the
// last is reduced): y = gamma * (x - mean) / sqrt(variance + epsilon) + beta, with the batch's
// mean and biased variance in training (Keras' moments) or given statistics.
//
// Tenfold's own kernel, not oneDNN's: oneDNN 2.6 sums the statistics in float32, and over
// 64x14x14 rows its outputs were off by up to 5.7e-6 (about 25 ulps) and the gradients of a
// small BatchNormalization model 10x further from float64 than Keras' float32 ones. Here every
// per-channel sum accumulates in double, over fixed chunks of rows added in order, so the
// result does not depend on the thread count. The work is a few passes over memory.
// Activations and their gradients are float32 or bfloat16 (the geometry's dtype; computed in
// float either way); statistics, gamma and beta are float32.
//
// A ReLU after the normalization (ResNet's BatchNormalization -> Activation('relu')) runs in
// its passes: the output is clamped as it is written, and backward multiplies the gradient it
// reads by the ReLU's derivative, recomputed from the input it reads anyway. Forward saves a
// pass over memory, backward the ReLU's whole pass: on 512x28x28x32, 1 thread, forward 9.2 ms
// vs 9.2 + 5.1 unfused, backward 14.0 vs 13.0 + 9.7 (TENFOLD_PROFILE, resnet_bn).
#include <cstdint>
#include <limits>
#include <vector>

#include "core/tensor.h"
#include "kernels/column_sums.h"

namespace tenfold::kernels {

struct BatchNormGeometry {
  int64_t rows = 0;
  int64_t channels = 0;
  double epsilon = 1e-3;
  DType dtype = DType::float32;  // of the activations and their gradients
  /// A fused ReLU: the output is min(max(y, 0), relu_max_value), and the gradients backward
  /// takes are its output's (passed on where 0 < output < relu_max_value, as its derivative
  /// computed from that output).
  bool relu = false;
  float relu_max_value = std::numeric_limits<float>::infinity();
};

class BatchNormKernel {
 public:
  explicit BatchNormKernel(const BatchNormGeometry& g);

  /// Per-channel sums over src's rows: sums[c] = sum x, sums[channels + c] = sum x^2.
  void forward_sums(const void* src, double* sums);
  /// The mean and biased variance of each channel from forward_sums over `rows` rows (one
  /// replica's, or summed over replicas).
  void statistics_from(const double* sums, double rows, float* mean, float* variance) const;
  /// dst = src * a + (beta - mean * a), a = gamma / sqrt(variance + epsilon), as Keras
  /// computes it (then the ReLU, when fused). gamma null is 1, beta null is 0.
  void normalize(const void* src, const float* mean, const float* variance, const float* gamma,
                 const float* beta, void* dst);

  /// Per-channel sums for backward: sums[c] = sum dy, sums[channels + c] = sum dy * x. With a
  /// fused ReLU, dy is diff_dst times the ReLU's derivative (from the last normalize).
  void backward_sums(const void* src, const void* diff_dst, double* sums);
  /// Gradients of normalize through the batch statistics of `rows` rows (summed over
  /// replicas when synchronized), given backward_sums of those rows (`sums`) and of src's
  /// own rows (`own_sums`: diff_gamma and diff_beta are this replica's share, which the
  /// gradient reducer adds up). diff_src, diff_gamma and diff_beta may each be null.
  void backward_through_statistics(const void* src, const void* diff_dst, const float* mean,
                                   const float* variance, const float* gamma, const double* sums,
                                   double rows, const double* own_sums, void* diff_src,
                                   float* diff_gamma, float* diff_beta);
  /// Gradient of normalize with constant statistics (a frozen layer): dx = dy * a.
  void backward_with_constant_statistics(const void* src, const void* diff_dst, const float* variance,
                                         const float* gamma, void* diff_src);
  int64_t rows() const { return g_.rows; }
  DType dtype() const { return g_.dtype; }

 private:
  /// dst[r, c] = a_[c] * first[r, c] + b_[c] * second[r, c] + offset_[c]; second may be null.
  /// `relu_input` (backward with a fused ReLU: the normalization's input): first is
  /// multiplied by the ReLU's derivative there. `clamp` (forward with a fused ReLU): dst is the
  /// ReLU's.
  void per_channel_affine(const void* first, const void* second, const void* relu_input, bool clamp,
                          void* dst) const;
  /// Per-channel sums of f(a, b) = (a, a * b) over the rows of a and b (b may be a); with
  /// `masked_by_b`, a multiplied by the fused ReLU's derivative at the normalization input b.
  void paired_sums(const void* a, const void* b, bool masked_by_b, double* sums);

  /// The values of group `group`: width_, or fewer in a last group of fewer rows.
  int64_t group_width(int64_t group) const;
  /// Repeats the first `channels` coefficients of a_, b_ and offset_ over a group's width.
  void tile_coefficients();

  BatchNormGeometry g_;
  // The passes see the rows in groups of group_rows_ (width_ values), so that short rows
  // fill whole vectors; every per-channel array below repeats over a group's width.
  int64_t group_rows_, width_, groups_;
  ChunkedColumnSums sums_;  // two sums per value of a group
  std::vector<double> group_sums_;
  std::vector<float> a_, b_, offset_;  // per-channel coefficients of the elementwise pass
  std::vector<float> forward_a_, forward_offset_;  // the last normalize's
};

}  // namespace tenfold::kernels
