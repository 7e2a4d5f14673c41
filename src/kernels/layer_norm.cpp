#include "kernels/layer_norm.h"

#include <cmath>

namespace tenfold::kernels {

LayerNormKernel::LayerNormKernel(int64_t rows, int64_t channels, double epsilon)
    : rows_(rows),
      channels_(channels),
      epsilon_(epsilon),
      mean_(size_t(rows)),
      inverse_std_(size_t(rows)),
      column_sums_(rows, 2 * channels),
      sums_(size_t(2 * channels)) {}

void LayerNormKernel::forward(const float* src, const float* gamma, const float* beta, float* dst) {
  const int64_t channels = channels_;
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < rows_; ++row) {
    const float* x = src + row * channels;
    float* y = dst + row * channels;
    double sum = 0, squares = 0;
    for (int64_t c = 0; c < channels; ++c) sum += x[c];
    const double mean = sum / double(channels);
    for (int64_t c = 0; c < channels; ++c) squares += (x[c] - mean) * (x[c] - mean);
    const float inverse_std = float(1.0 / std::sqrt(squares / double(channels) + epsilon_));
    mean_[size_t(row)] = float(mean);
    inverse_std_[size_t(row)] = inverse_std;
    const float m = float(mean);
    for (int64_t c = 0; c < channels; ++c) {
      y[c] = (x[c] - m) * inverse_std * (gamma ? gamma[c] : 1.0f) + (beta ? beta[c] : 0.0f);
    }
  }
}

void LayerNormKernel::backward(const float* src, const float* diff_dst, const float* gamma,
                               float* diff_src, float* diff_gamma, float* diff_beta) {
  const int64_t channels = channels_;
  if (diff_src) {
    // dx = inverse_std * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma.
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < rows_; ++row) {
      const float* x = src + row * channels;
      const float* dy = diff_dst + row * channels;
      float* dx = diff_src + row * channels;
      const float m = mean_[size_t(row)], inverse_std = inverse_std_[size_t(row)];
      double sum_g = 0, sum_g_xhat = 0;
      for (int64_t c = 0; c < channels; ++c) {
        const double g = double(dy[c]) * (gamma ? gamma[c] : 1.0f);
        sum_g += g;
        sum_g_xhat += g * (x[c] - m) * inverse_std;
      }
      const float mean_g = float(sum_g / double(channels));
      const float mean_g_xhat = float(sum_g_xhat / double(channels));
      for (int64_t c = 0; c < channels; ++c) {
        const float xhat = (x[c] - m) * inverse_std;
        dx[c] = inverse_std * (dy[c] * (gamma ? gamma[c] : 1.0f) - mean_g - xhat * mean_g_xhat);
      }
    }
  }
  if (!diff_gamma && !diff_beta) return;
  column_sums_.run(2 * channels, [&](int64_t row, double* partial) {
    const float* x = src + row * channels;
    const float* dy = diff_dst + row * channels;
    const float m = mean_[size_t(row)], inverse_std = inverse_std_[size_t(row)];
    double* beta_sums = partial + channels;
    for (int64_t c = 0; c < channels; ++c) {
      partial[c] += double(dy[c]) * ((x[c] - m) * inverse_std);
      beta_sums[c] += dy[c];
    }
  }, sums_.data());
  for (int64_t c = 0; c < channels; ++c) {
    if (diff_gamma) diff_gamma[c] = float(sums_[size_t(c)]);
    if (diff_beta) diff_beta[c] = float(sums_[size_t(channels + c)]);
  }
}

}  // namespace tenfold::kernels
