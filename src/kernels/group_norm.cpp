#include "kernels/group_norm.h"

#include <cmath>

namespace tenfold::kernels {

GroupNormKernel::GroupNormKernel(int64_t samples, int64_t positions, int64_t channels, int64_t groups, double epsilon)
    : samples_(samples),
      positions_(positions),
      channels_(channels),
      groups_(groups),
      group_channels_(channels / groups),
      epsilon_(epsilon),
      mean_(size_t(samples * groups)),
      inverse_std_(size_t(samples * groups)),
      column_sums_(samples * positions, 2 * channels),
      sums_(size_t(2 * channels)) {}

template <typename F>
void GroupNormKernel::for_each_group(const F& f) const {
#pragma omp parallel for schedule(static)
  for (int64_t index = 0; index < samples_ * groups_; ++index) {
    const int64_t sample = index / groups_, group = index % groups_;
    f(index, sample * positions_ * channels_, group * group_channels_);
  }
}

void GroupNormKernel::forward(const float* src, const float* gamma, const float* beta, float* dst) {
  const int64_t positions = positions_, channels = channels_, width = group_channels_;
  const double count = double(positions * width);
  for_each_group([&](int64_t index, int64_t offset, int64_t first) {
    const float* x = src + offset;
    float* y = dst + offset;
    double sum = 0, squares = 0;
    for (int64_t p = 0; p < positions; ++p) {
      for (int64_t c = first; c < first + width; ++c) sum += x[p * channels + c];
    }
    const double mean = sum / count;
    for (int64_t p = 0; p < positions; ++p) {
      for (int64_t c = first; c < first + width; ++c) squares += (x[p * channels + c] - mean) * (x[p * channels + c] - mean);
    }
    const float inverse_std = float(1.0 / std::sqrt(squares / count + epsilon_));
    mean_[size_t(index)] = float(mean);
    inverse_std_[size_t(index)] = inverse_std;
    const float m = float(mean);
    for (int64_t p = 0; p < positions; ++p) {
      for (int64_t c = first; c < first + width; ++c) {
        y[p * channels + c] = (x[p * channels + c] - m) * inverse_std * (gamma ? gamma[c] : 1.0f) + (beta ? beta[c] : 0.0f);
      }
    }
  });
}

void GroupNormKernel::backward(const float* src, const float* diff_dst, const float* gamma, float* diff_src,
                               float* diff_gamma, float* diff_beta) {
  const int64_t positions = positions_, channels = channels_, width = group_channels_;
  const double count = double(positions * width);
  if (diff_src) {
    // dx = inverse_std * (g - mean(g) - xhat * mean(g * xhat)) over the group, g = dy * gamma.
    for_each_group([&](int64_t index, int64_t offset, int64_t first) {
      const float* x = src + offset;
      const float* dy = diff_dst + offset;
      float* dx = diff_src + offset;
      const float m = mean_[size_t(index)], inverse_std = inverse_std_[size_t(index)];
      double sum_g = 0, sum_g_xhat = 0;
      for (int64_t p = 0; p < positions; ++p) {
        for (int64_t c = first; c < first + width; ++c) {
          const double g = double(dy[p * channels + c]) * (gamma ? gamma[c] : 1.0f);
          sum_g += g;
          sum_g_xhat += g * (x[p * channels + c] - m) * inverse_std;
        }
      }
      const float mean_g = float(sum_g / count), mean_g_xhat = float(sum_g_xhat / count);
      for (int64_t p = 0; p < positions; ++p) {
        for (int64_t c = first; c < first + width; ++c) {
          const int64_t at = p * channels + c;
          const float xhat = (x[at] - m) * inverse_std;
          dx[at] = inverse_std * (dy[at] * (gamma ? gamma[c] : 1.0f) - mean_g - xhat * mean_g_xhat);
        }
      }
    });
  }
  if (!diff_gamma && !diff_beta) return;
  column_sums_.run(2 * channels, [&](int64_t row, double* partial) {
    const float* x = src + row * channels;
    const float* dy = diff_dst + row * channels;
    const int64_t base = (row / positions) * groups_;
    double* beta_sums = partial + channels;
    for (int64_t group = 0; group < groups_; ++group) {
      const float m = mean_[size_t(base + group)], inverse_std = inverse_std_[size_t(base + group)];
      for (int64_t c = group * width; c < (group + 1) * width; ++c) {
        partial[c] += double(dy[c]) * ((x[c] - m) * inverse_std);
        beta_sums[c] += dy[c];
      }
    }
  }, sums_.data());
  for (int64_t c = 0; c < channels; ++c) {
    if (diff_gamma) diff_gamma[c] = float(sums_[size_t(c)]);
    if (diff_beta) diff_beta[c] = float(sums_[size_t(channels + c)]);
  }
}

}  // namespace tenfold::kernels
