#include "kernels/group_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

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

void GroupNormKernel::forward(const float* src, const float* gamma, const float* beta, float* dst) {
  const int64_t positions = positions_, channels = channels_, width = group_channels_, groups = groups_;
  const double count = double(positions * width);
  // Per sample: per-channel sums over the positions (inner loops over all channels, contiguous,
  // so they vectorize), then per group; then y = a x + b per channel.
#pragma omp parallel
  {
    std::vector<double> sums(static_cast<size_t>(channels));
    std::vector<float> mean_of(static_cast<size_t>(channels)), a(static_cast<size_t>(channels)),
        b(static_cast<size_t>(channels));
#pragma omp for schedule(static)
    for (int64_t sample = 0; sample < samples_; ++sample) {
      const float* x = src + sample * positions * channels;
      float* y = dst + sample * positions * channels;
      std::fill(sums.begin(), sums.end(), 0.0);
      for (int64_t p = 0; p < positions; ++p) {
        for (int64_t c = 0; c < channels; ++c) sums[size_t(c)] += x[p * channels + c];
      }
      for (int64_t g = 0; g < groups; ++g) {
        double sum = 0;
        for (int64_t c = g * width; c < (g + 1) * width; ++c) sum += sums[size_t(c)];
        mean_[size_t(sample * groups + g)] = float(sum / count);
        for (int64_t c = g * width; c < (g + 1) * width; ++c) mean_of[size_t(c)] = float(sum / count);
      }
      // The variance in a second pass, around the mean.
      std::fill(sums.begin(), sums.end(), 0.0);
      for (int64_t p = 0; p < positions; ++p) {
        for (int64_t c = 0; c < channels; ++c) {
          const double d = double(x[p * channels + c]) - mean_of[size_t(c)];
          sums[size_t(c)] += d * d;
        }
      }
      for (int64_t g = 0; g < groups; ++g) {
        double squares = 0;
        for (int64_t c = g * width; c < (g + 1) * width; ++c) squares += sums[size_t(c)];
        const float inverse_std = float(1.0 / std::sqrt(squares / count + epsilon_));
        inverse_std_[size_t(sample * groups + g)] = inverse_std;
        for (int64_t c = g * width; c < (g + 1) * width; ++c) {
          a[size_t(c)] = inverse_std * (gamma ? gamma[c] : 1.0f);
          b[size_t(c)] = (beta ? beta[c] : 0.0f) - mean_of[size_t(c)] * a[size_t(c)];
        }
      }
      for (int64_t p = 0; p < positions; ++p) {
        for (int64_t c = 0; c < channels; ++c) y[p * channels + c] = x[p * channels + c] * a[size_t(c)] + b[size_t(c)];
      }
    }
  }
}

void GroupNormKernel::backward(const float* src, const float* diff_dst, const float* gamma, float* diff_src,
                               float* diff_gamma, float* diff_beta) {
  const int64_t positions = positions_, channels = channels_, width = group_channels_, groups = groups_;
  const double count = double(positions * width);
  if (diff_src) {
    // dx = inverse_std * (g - mean(g) - xhat * mean(g * xhat)) over the group, g = dy * gamma:
    // per channel dx = A dy + B x + C, from the per-channel sums of dy and dy * x.
#pragma omp parallel
    {
      std::vector<double> sum_dy(static_cast<size_t>(channels)), sum_dy_x(static_cast<size_t>(channels));
      std::vector<float> A(static_cast<size_t>(channels)), B(static_cast<size_t>(channels)), C(static_cast<size_t>(channels));
#pragma omp for schedule(static)
      for (int64_t sample = 0; sample < samples_; ++sample) {
        const int64_t offset = sample * positions * channels;
        const float* x = src + offset;
        const float* dy = diff_dst + offset;
        float* dx = diff_src + offset;
        std::fill(sum_dy.begin(), sum_dy.end(), 0.0);
        std::fill(sum_dy_x.begin(), sum_dy_x.end(), 0.0);
        for (int64_t p = 0; p < positions; ++p) {
          for (int64_t c = 0; c < channels; ++c) {
            sum_dy[size_t(c)] += dy[p * channels + c];
            sum_dy_x[size_t(c)] += double(dy[p * channels + c]) * x[p * channels + c];
          }
        }
        for (int64_t g = 0; g < groups; ++g) {
          const double m = mean_[size_t(sample * groups + g)], inverse_std = inverse_std_[size_t(sample * groups + g)];
          double sum_g = 0, sum_g_xhat = 0;
          for (int64_t c = g * width; c < (g + 1) * width; ++c) {
            const double scale = gamma ? gamma[c] : 1.0;
            sum_g += scale * sum_dy[size_t(c)];
            sum_g_xhat += scale * (sum_dy_x[size_t(c)] - m * sum_dy[size_t(c)]) * inverse_std;
          }
          const double mean_g = sum_g / count, mean_g_xhat = sum_g_xhat / count;
          for (int64_t c = g * width; c < (g + 1) * width; ++c) {
            A[size_t(c)] = float(inverse_std * (gamma ? gamma[c] : 1.0));
            B[size_t(c)] = float(-inverse_std * inverse_std * mean_g_xhat);
            C[size_t(c)] = float(inverse_std * (m * inverse_std * mean_g_xhat - mean_g));
          }
        }
        for (int64_t p = 0; p < positions; ++p) {
          for (int64_t c = 0; c < channels; ++c) {
            const int64_t at = p * channels + c;
            dx[at] = A[size_t(c)] * dy[at] + B[size_t(c)] * x[at] + C[size_t(c)];
          }
        }
      }
    }
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
