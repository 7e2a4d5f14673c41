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
#include <cstdint>
#include <vector>

namespace tenfold::kernels {

struct BatchNormGeometry {
  int64_t rows = 0;
  int64_t channels = 0;
  double epsilon = 1e-3;
};

class BatchNormKernel {
 public:
  explicit BatchNormKernel(const BatchNormGeometry& g);

  /// The mean and biased variance of each channel of src [rows, channels].
  void statistics(const float* src, float* mean, float* variance);
  /// dst = src * a + (beta - mean * a), a = gamma / sqrt(variance + epsilon), as Keras
  /// computes it. gamma null is 1, beta null is 0.
  void normalize(const float* src, const float* mean, const float* variance, const float* gamma,
                 const float* beta, float* dst);
  /// Gradients of normalize. With `batch_statistics` the mean and variance are src's own and
  /// the gradient goes through them; otherwise they are constants (inference statistics).
  /// diff_src, diff_gamma and diff_beta may each be null (not wanted).
  void backward(const float* src, const float* diff_dst, const float* mean, const float* variance,
                const float* gamma, bool batch_statistics, float* diff_src, float* diff_gamma,
                float* diff_beta);

 private:
  /// sums[k * channels + c] for k < terms: per-channel sums over rows of what `add(row, sums)`
  /// adds, accumulated per chunk of rows (in parallel), then over chunks in order.
  template <typename Add>
  void channel_sums(int terms, const Add& add, double* sums);
  /// dst[r, c] = a_[c] * first[r, c] + b_[c] * second[r, c] + offset_[c]; second may be null.
  void per_channel_affine(const float* first, const float* second, float* dst) const;

  BatchNormGeometry g_;
  std::vector<double> partial_;  // per chunk of rows: its sums
  std::vector<double> sums_;
  std::vector<float> a_, b_, offset_;  // per-channel coefficients of the elementwise pass
};

}  // namespace tenfold::kernels
