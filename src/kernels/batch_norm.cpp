#include "kernels/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/bfloat16.h"

namespace tenfold::kernels {

BatchNormKernel::BatchNormKernel(const BatchNormGeometry& g)
    : g_(g),
      sums_(g.rows, 2 * g.channels),
      a_(size_t(g.channels)),
      b_(size_t(g.channels)),
      offset_(size_t(g.channels)) {}

namespace {

using Yes = std::true_type;
using No = std::false_type;

/// Whether a ReLU capped at `max_value` passes the gradient at its output `y`.
inline bool relu_passes(float y, float max_value) { return y > 0.0f && y < max_value; }

}  // namespace

void BatchNormKernel::per_channel_affine(const void* first, const void* second, const void* relu_output,
                                         bool clamp, void* dst) const {
  with_element_type(g_.dtype, [&](auto element) {
    using Element = decltype(element);
    const int64_t channels = g_.channels;
    const float *a = a_.data(), *b = b_.data(), *offset = offset_.data();
    const float max_value = g_.relu_max_value;
    // The flags are types, so each combination compiles to its own loop and vectorizes.
    auto rows = [&](auto with_second, auto with_mask, auto with_clamp) {
#pragma omp parallel for schedule(static)
      for (int64_t row = 0; row < g_.rows; ++row) {
        const int64_t at = row * channels;
        const Element* __restrict x = static_cast<const Element*>(first) + at;
        const Element* __restrict z = static_cast<const Element*>(second) + at;
        const Element* __restrict out = static_cast<const Element*>(relu_output) + at;
        Element* __restrict y = static_cast<Element*>(dst) + at;
        for (int64_t c = 0; c < channels; ++c) {
          float value = as_float(x[c]);
          if constexpr (with_mask) value = relu_passes(as_float(out[c]), max_value) ? value : 0.0f;
          float result;
          if constexpr (with_second) {
            result = a[c] * value + b[c] * as_float(z[c]) + offset[c];
          } else {
            result = value * a[c] + offset[c];
          }
          if constexpr (with_clamp) result = std::min(std::max(result, 0.0f), max_value);
          assign(y[c], result);
        }
      }
    };
    if (second) {
      relu_output ? rows(Yes(), Yes(), No()) : rows(Yes(), No(), No());
    } else if (relu_output) {
      rows(No(), Yes(), No());
    } else {
      clamp ? rows(No(), No(), Yes()) : rows(No(), No(), No());
    }
  });
}

void BatchNormKernel::paired_sums(const void* a, const void* b, const void* relu_output, double* sums) {
  with_element_type(g_.dtype, [&](auto element) {
    using Element = decltype(element);
    const int64_t channels = g_.channels;
    const float max_value = g_.relu_max_value;
    auto run = [&](auto with_mask) {
      sums_.run(2 * channels, [&](int64_t row, double* partial) {
        const Element* first = static_cast<const Element*>(a) + row * channels;
        const Element* second = static_cast<const Element*>(b) + row * channels;
        const Element* out = static_cast<const Element*>(relu_output) + row * channels;
        double* products = partial + channels;
        for (int64_t c = 0; c < channels; ++c) {
          float value = as_float(first[c]);
          if constexpr (with_mask) value = relu_passes(as_float(out[c]), max_value) ? value : 0.0f;
          partial[c] += value;
          products[c] += double(value) * as_float(second[c]);
        }
      }, sums);
    };
    relu_output ? run(Yes()) : run(No());
  });
}

void BatchNormKernel::forward_sums(const void* src, double* sums) {
  // Sums of x and x^2, one pass: in double the cancellation in E[x^2] - E[x]^2 costs nothing
  // a float input can show.
  paired_sums(src, src, nullptr, sums);
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
  per_channel_affine(src, nullptr, nullptr, g_.relu, dst);
}

void BatchNormKernel::backward_sums(const void* src, const void* dst, const void* diff_dst, double* sums) {
  paired_sums(diff_dst, src, g_.relu ? dst : nullptr, sums);
}

void BatchNormKernel::backward_through_statistics(const void* src, const void* dst, const void* diff_dst,
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
  if (diff_src) per_channel_affine(diff_dst, src, g_.relu ? dst : nullptr, false, diff_src);
}

void BatchNormKernel::backward_with_constant_statistics(const void* dst, const void* diff_dst, const float* variance,
                                                        const float* gamma, void* diff_src) {
  for (int64_t c = 0; c < g_.channels; ++c) {
    a_[size_t(c)] = float((gamma ? gamma[c] : 1.0) / std::sqrt(double(variance[c]) + g_.epsilon));
    offset_[size_t(c)] = 0.0f;
  }
  per_channel_affine(diff_dst, nullptr, g_.relu ? dst : nullptr, false, diff_src);
}

}  // namespace tenfold::kernels
