#include "kernels/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/bfloat16.h"

namespace tenfold::kernels {

namespace {

using Yes = std::true_type;
using No = std::false_type;

/// The normalization of x by a channel's coefficients. One function for forward and for the
/// fused ReLU's derivative in backward, so both compute the same bits (an explicit fma: the
/// compiler may not contract one and not the other).
inline float normalized(float x, float a, float offset) { return std::fma(x, a, offset); }

/// The derivative of the fused ReLU, 1 or 0, at input x of the normalization: where the
/// output forward stored lies strictly between 0 and the cap. The normalized value rounded to
/// Element, not clamped: rounding is monotone and the cap exact in Element (the layer fuses
/// only then), so the two agree, and without the clamp's branches GCC vectorizes the loops
/// around this (3x faster). Ints, not bools, for the same reason.
template <typename Element>
float relu_derivative(float x, float a, float offset, float max_value) {
  Element stored;
  assign(stored, normalized(x, a, offset));
  const float y = as_float(stored);
  return float(int(y > 0.0f) & int(y < max_value));
}

/// Rows per group: the fewest whose values fill whole vectors of 32 (a 64-byte vector of
/// bfloat16). GCC vectorizes the loops over a row with 64-byte vectors and a 32-byte remainder;
/// 16 bfloat16 channels ran only the remainder, 2.5x slower than 32 (tenfold-bench-batch-norm).
int64_t rows_per_group(int64_t channels) {
  int64_t rows = 1;
  while ((rows * channels) % 32 != 0 && rows < 32) ++rows;
  return rows;
}

}  // namespace

BatchNormKernel::BatchNormKernel(const BatchNormGeometry& g)
    : g_(g),
      group_rows_(rows_per_group(g.channels)),
      width_(group_rows_ * g.channels),
      groups_((g.rows + group_rows_ - 1) / group_rows_),
      sums_(groups_, 2 * width_),
      group_sums_(size_t(2 * width_)),
      a_(size_t(width_)),
      b_(size_t(width_)),
      offset_(size_t(width_)),
      forward_a_(size_t(width_)),
      forward_offset_(size_t(width_)) {}

int64_t BatchNormKernel::group_width(int64_t group) const {
  return std::min(width_, (g_.rows - group * group_rows_) * g_.channels);
}

void BatchNormKernel::tile_coefficients() {
  for (std::vector<float>* coefficients : {&a_, &b_, &offset_}) {
    for (int64_t i = g_.channels; i < width_; ++i) (*coefficients)[size_t(i)] = (*coefficients)[size_t(i - g_.channels)];
  }
}

void BatchNormKernel::per_channel_affine(const void* first, const void* second, const void* relu_input,
                                         bool clamp, void* dst) const {
  with_element_type(g_.dtype, [&](auto element) {
    using Element = decltype(element);
    const float *a = a_.data(), *b = b_.data(), *offset = offset_.data();
    const float *forward_a = forward_a_.data(), *forward_offset = forward_offset_.data();
    const float max_value = g_.relu_max_value;
    // The flags are types, so each combination compiles to its own loop and vectorizes.
    auto rows = [&](auto with_second, auto with_mask, auto with_clamp) {
#pragma omp parallel for schedule(static)
      for (int64_t group = 0; group < groups_; ++group) {
        const int64_t at = group * width_, width = group_width(group);
        const Element* __restrict x = static_cast<const Element*>(first) + at;
        const Element* __restrict z = static_cast<const Element*>(second) + at;
        const Element* __restrict input = static_cast<const Element*>(relu_input) + at;
        Element* __restrict y = static_cast<Element*>(dst) + at;
        for (int64_t c = 0; c < width; ++c) {
          float value = as_float(x[c]);
          if constexpr (with_mask) {
            value *= relu_derivative<Element>(as_float(input[c]), forward_a[c], forward_offset[c], max_value);
          }
          float result;
          if constexpr (with_second) {
            result = a[c] * value + b[c] * as_float(z[c]) + offset[c];
          } else {
            result = normalized(value, a[c], offset[c]);
          }
          if constexpr (with_clamp) result = std::min(std::max(result, 0.0f), max_value);
          assign(y[c], result);
        }
      }
    };
    if (second) {
      relu_input ? rows(Yes(), Yes(), No()) : rows(Yes(), No(), No());
    } else if (relu_input) {
      rows(No(), Yes(), No());
    } else {
      clamp ? rows(No(), No(), Yes()) : rows(No(), No(), No());
    }
  });
}

void BatchNormKernel::paired_sums(const void* a, const void* b, bool masked_by_b, double* sums) {
  with_element_type(g_.dtype, [&](auto element) {
    using Element = decltype(element);
    const int64_t width = width_;
    const float *forward_a = forward_a_.data(), *forward_offset = forward_offset_.data();
    const float max_value = g_.relu_max_value;
    auto run = [&](auto masked) {
      sums_.run(2 * width, [&](int64_t group, double* __restrict partial) {
        const Element* __restrict first = static_cast<const Element*>(a) + group * width;
        const Element* __restrict second = static_cast<const Element*>(b) + group * width;
        double* __restrict products = partial + width;
        const int64_t count = group_width(group);
        for (int64_t c = 0; c < count; ++c) {
          float value = as_float(first[c]);
          if constexpr (masked) {
            value *= relu_derivative<Element>(as_float(second[c]), forward_a[c], forward_offset[c], max_value);
          }
          partial[c] += value;
          products[c] += double(value) * as_float(second[c]);
        }
      }, group_sums_.data());
    };
    masked_by_b ? run(Yes()) : run(No());
  });
  // A group's rows, each channel's sums over them, in order.
  const int64_t channels = g_.channels;
  std::fill(sums, sums + 2 * channels, 0.0);
  for (int64_t row = 0; row < group_rows_; ++row) {
    for (int64_t c = 0; c < channels; ++c) {
      sums[c] += group_sums_[size_t(row * channels + c)];
      sums[channels + c] += group_sums_[size_t(width_ + row * channels + c)];
    }
  }
}

void BatchNormKernel::forward_sums(const void* src, double* sums) {
  // Sums of x and x^2, one pass: in double the cancellation in E[x^2] - E[x]^2 costs nothing
  // a float input can show.
  paired_sums(src, src, false, sums);
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
  tile_coefficients();
  forward_a_ = a_;  // for the fused ReLU's derivative in backward
  forward_offset_ = offset_;
  per_channel_affine(src, nullptr, nullptr, g_.relu, dst);
}

void BatchNormKernel::backward_sums(const void* src, const void* diff_dst, double* sums) {
  paired_sums(diff_dst, src, g_.relu, sums);
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
  tile_coefficients();
  if (diff_src) per_channel_affine(diff_dst, src, g_.relu ? src : nullptr, false, diff_src);
}

void BatchNormKernel::backward_with_constant_statistics(const void* src, const void* diff_dst,
                                                        const float* variance, const float* gamma,
                                                        void* diff_src) {
  for (int64_t c = 0; c < g_.channels; ++c) {
    a_[size_t(c)] = float((gamma ? gamma[c] : 1.0) / std::sqrt(double(variance[c]) + g_.epsilon));
    offset_[size_t(c)] = 0.0f;
  }
  tile_coefficients();
  per_channel_affine(diff_dst, nullptr, g_.relu ? src : nullptr, false, diff_src);
}

}  // namespace tenfold::kernels
