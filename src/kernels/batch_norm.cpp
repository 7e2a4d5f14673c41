#include "kernels/batch_norm.h"

#include <algorithm>
#include <cmath>

namespace tenfold::kernels {

namespace {

// Rows per chunk of the per-channel sums: big enough to amortise the chunk's bookkeeping,
// small enough to give every thread several chunks.
constexpr int64_t kChunkRows = 512;

int64_t chunk_count(int64_t rows) { return (rows + kChunkRows - 1) / kChunkRows; }

}  // namespace

BatchNormKernel::BatchNormKernel(const BatchNormGeometry& g)
    : g_(g),
      partial_(size_t(chunk_count(g.rows) * 2 * g.channels)),
      sums_(size_t(2 * g.channels)),
      a_(size_t(g.channels)),
      b_(size_t(g.channels)),
      offset_(size_t(g.channels)) {}

template <typename Add>
void BatchNormKernel::channel_sums(int terms, const Add& add, double* sums) {
  const int64_t chunks = chunk_count(g_.rows), width = terms * g_.channels;
#pragma omp parallel for schedule(static)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    double* partial = partial_.data() + chunk * width;
    std::fill(partial, partial + width, 0.0);
    const int64_t end = std::min(g_.rows, (chunk + 1) * kChunkRows);
    for (int64_t row = chunk * kChunkRows; row < end; ++row) add(row, partial);
  }
  std::fill(sums, sums + width, 0.0);
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const double* partial = partial_.data() + chunk * width;
    for (int64_t i = 0; i < width; ++i) sums[i] += partial[i];
  }
}

void BatchNormKernel::per_channel_affine(const float* first, const float* second, float* dst) const {
  const int64_t channels = g_.channels;
  const float *a = a_.data(), *b = b_.data(), *offset = offset_.data();
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < g_.rows; ++row) {
    const float* x = first + row * channels;
    float* y = dst + row * channels;
    if (second) {
      const float* z = second + row * channels;
      for (int64_t c = 0; c < channels; ++c) y[c] = a[c] * x[c] + b[c] * z[c] + offset[c];
    } else {
      for (int64_t c = 0; c < channels; ++c) y[c] = x[c] * a[c] + offset[c];
    }
  }
}

void BatchNormKernel::statistics(const float* src, float* mean, float* variance) {
  const int64_t channels = g_.channels;
  // One pass of sums of x and x^2: in double the cancellation in E[x^2] - E[x]^2 costs
  // nothing a float input can show.
  channel_sums(2, [&](int64_t row, double* sums) {
    const float* x = src + row * channels;
    double* squares = sums + channels;
    for (int64_t c = 0; c < channels; ++c) {
      sums[c] += x[c];
      squares[c] += double(x[c]) * x[c];
    }
  }, sums_.data());
  for (int64_t c = 0; c < channels; ++c) {
    const double m = sums_[size_t(c)] / double(g_.rows);
    mean[c] = float(m);
    variance[c] = float(std::max(0.0, sums_[size_t(channels + c)] / double(g_.rows) - m * m));
  }
}

void BatchNormKernel::normalize(const float* src, const float* mean, const float* variance,
                                const float* gamma, const float* beta, float* dst) {
  for (int64_t c = 0; c < g_.channels; ++c) {
    const double a = (gamma ? gamma[c] : 1.0) / std::sqrt(double(variance[c]) + g_.epsilon);
    a_[size_t(c)] = float(a);
    offset_[size_t(c)] = float((beta ? beta[c] : 0.0) - double(mean[c]) * a);
  }
  per_channel_affine(src, nullptr, dst);
}

void BatchNormKernel::backward(const float* src, const float* diff_dst, const float* mean,
                               const float* variance, const float* gamma, bool batch_statistics,
                               float* diff_src, float* diff_gamma, float* diff_beta) {
  const int64_t channels = g_.channels;
  const double rows = double(g_.rows);
  // With xhat = (x - mean) * inv_std: d beta = sum dy, d gamma = sum dy * xhat, computed as
  // (sum dy * x - mean * sum dy) * inv_std.
  const bool need_sums = batch_statistics || diff_gamma || diff_beta;
  if (need_sums) {
    channel_sums(2, [&](int64_t row, double* sums) {
      const float* dy = diff_dst + row * channels;
      const float* x = src + row * channels;
      double* products = sums + channels;
      for (int64_t c = 0; c < channels; ++c) {
        sums[c] += dy[c];
        products[c] += double(dy[c]) * x[c];
      }
    }, sums_.data());
  }
  for (int64_t c = 0; c < channels; ++c) {
    const double inv_std = 1.0 / std::sqrt(double(variance[c]) + g_.epsilon);
    const double sum_dy = need_sums ? sums_[size_t(c)] : 0.0;
    const double sum_dy_xhat =
        need_sums ? (sums_[size_t(channels + c)] - double(mean[c]) * sum_dy) * inv_std : 0.0;
    if (diff_beta) diff_beta[c] = float(sum_dy);
    if (diff_gamma) diff_gamma[c] = float(sum_dy_xhat);
    const double scale = (gamma ? gamma[c] : 1.0) * inv_std;
    // With batch statistics dx = scale * (dy - sum_dy / rows - xhat * sum_dy_xhat / rows),
    // an affine function of dy and x per channel; otherwise dx = scale * dy.
    a_[size_t(c)] = float(scale);
    b_[size_t(c)] = batch_statistics ? float(-scale * inv_std * sum_dy_xhat / rows) : 0.0f;
    offset_[size_t(c)] =
        batch_statistics ? float(scale * (-sum_dy + double(mean[c]) * inv_std * sum_dy_xhat) / rows) : 0.0f;
  }
  if (diff_src) per_channel_affine(diff_dst, batch_statistics ? src : nullptr, diff_src);
}

}  // namespace tenfold::kernels
