#include "kernels/batch_norm.h"

#include <algorithm>
#include <cmath>

#include "kernels/bfloat16.h"

namespace tenfold::kernels {

BatchNormKernel::BatchNormKernel(const BatchNormGeometry& g)
    : g_(g),
      sums_(g.rows, 2 * g.channels),
      a_(size_t(g.channels)),
      b_(size_t(g.channels)),
      offset_(size_t(g.channels)) {}

void BatchNormKernel::per_channel_affine(const void* first, const void* second, void* dst) const {
  with_element_type(g_.dtype, [&](auto element) {
    using Element = decltype(element);
    const int64_t channels = g_.channels;
    const float *a = a_.data(), *b = b_.data(), *offset = offset_.data();
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < g_.rows; ++row) {
      const Element* __restrict x = static_cast<const Element*>(first) + row * channels;
      Element* __restrict y = static_cast<Element*>(dst) + row * channels;
      if (second) {
        const Element* __restrict z = static_cast<const Element*>(second) + row * channels;
        for (int64_t c = 0; c < channels; ++c) assign(y[c], a[c] * as_float(x[c]) + b[c] * as_float(z[c]) + offset[c]);
      } else {
        for (int64_t c = 0; c < channels; ++c) assign(y[c], as_float(x[c]) * a[c] + offset[c]);
      }
    }
  });
}

void BatchNormKernel::paired_sums(const void* a, const void* b, double* sums) {
  with_element_type(g_.dtype, [&](auto element) {
    using Element = decltype(element);
    const int64_t channels = g_.channels;
    sums_.run(2 * channels, [&](int64_t row, double* partial) {
      const Element* first = static_cast<const Element*>(a) + row * channels;
      const Element* second = static_cast<const Element*>(b) + row * channels;
      double* products = partial + channels;
      for (int64_t c = 0; c < channels; ++c) {
        partial[c] += as_float(first[c]);
        products[c] += double(as_float(first[c])) * as_float(second[c]);
      }
    }, sums);
  });
}

void BatchNormKernel::forward_sums(const void* src, double* sums) {
  // Sums of x and x^2, one pass: in double the cancellation in E[x^2] - E[x]^2 costs nothing
  // a float input can show.
  paired_sums(src, src, sums);
}

void BatchNormKernel::statistics_from(const double* sums, double rows, float* mean, float* variance) const {
  for (int64_t c = 0; c < g_.channels; ++c) {
    const double m = sums[c] / rows;
    mean[c] = float(m);
    variance[c] = float(std::max(0.0, sums[g_.channels + c] / rows - m * m));
  }
}

void BatchNormKernel::normalize(const void* src, const float* mean, const float* variance,
                                const float* gamma, const float* beta, void* dst) {
  for (int64_t c = 0; c < g_.channels; ++c) {
    const double a = (gamma ? gamma[c] : 1.0) / std::sqrt(double(variance[c]) + g_.epsilon);
    a_[size_t(c)] = float(a);
    offset_[size_t(c)] = float((beta ? beta[c] : 0.0) - double(mean[c]) * a);
  }
  per_channel_affine(src, nullptr, dst);
}

void BatchNormKernel::backward_sums(const void* src, const void* diff_dst, double* sums) {
  paired_sums(diff_dst, src, sums);
}

void BatchNormKernel::backward_through_statistics(const void* src, const void* diff_dst,
                                                  const float* mean, const float* variance,
                                                  const float* gamma, const double* sums, double rows,
                                                  const double* own_sums, void* diff_src,
                                                  float* diff_gamma, float* diff_beta) {
  const int64_t channels = g_.channels;
  for (int64_t c = 0; c < channels; ++c) {
    const double inv_std = 1.0 / std::sqrt(double(variance[c]) + g_.epsilon);
    // With xhat = (x - mean) * inv_std: d beta = sum dy, d gamma = sum dy * xhat
    // = (sum dy * x - mean * sum dy) * inv_std.
    auto sum_dy_xhat = [&](const double* s) { return (s[channels + c] - double(mean[c]) * s[c]) * inv_std; };
    if (diff_beta) diff_beta[c] = float(own_sums[c]);
    if (diff_gamma) diff_gamma[c] = float(sum_dy_xhat(own_sums));
    // dx = scale * (dy - sum_dy / rows - xhat * sum_dy_xhat / rows), affine in dy and x.
    const double scale = (gamma ? gamma[c] : 1.0) * inv_std, dy_xhat = sum_dy_xhat(sums);
    a_[size_t(c)] = float(scale);
    b_[size_t(c)] = float(-scale * inv_std * dy_xhat / rows);
    offset_[size_t(c)] = float(scale * (-sums[c] + double(mean[c]) * inv_std * dy_xhat) / rows);
  }
  if (diff_src) per_channel_affine(diff_dst, src, diff_src);
}

void BatchNormKernel::backward_with_constant_statistics(const void* diff_dst, const float* variance,
                                                        const float* gamma, void* diff_src) {
  for (int64_t c = 0; c < g_.channels; ++c) {
    a_[size_t(c)] = float((gamma ? gamma[c] : 1.0) / std::sqrt(double(variance[c]) + g_.epsilon));
    offset_[size_t(c)] = 0.0f;
  }
  per_channel_affine(diff_dst, nullptr, diff_src);
}

}  // namespace tenfold::kernels
