#pragma once
// Plain C++ activations (the test oracle). Elementwise ones compute their gradient from the
// output, as the fast kernels do; softmax runs over the last axis of [rows, classes].
#include <cmath>
#include <cstdint>

#include "kernels/window.h"

namespace tenfold::kernels::reference {

template <typename T>
void softmax_forward(int64_t rows, int64_t classes, const T* src, T* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = src + r * classes;
    T* y = dst + r * classes;
    T max = x[0];
    for (int64_t c = 1; c < classes; ++c) max = x[c] > max ? x[c] : max;
    T sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += (y[c] = std::exp(x[c] - max));
    for (int64_t c = 0; c < classes; ++c) y[c] /= sum;
  }
}

/// diff_src = y * (diff_dst - sum(diff_dst * y)) per row
template <typename T>
void softmax_backward(int64_t rows, int64_t classes, const T* dst, const T* diff_dst, T* diff_src) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* y = dst + r * classes;
    const T* dy = diff_dst + r * classes;
    T dot = 0;
    for (int64_t c = 0; c < classes; ++c) dot += dy[c] * y[c];
    for (int64_t c = 0; c < classes; ++c) diff_src[r * classes + c] = y[c] * (dy[c] - dot);
  }
}

/// Elementwise activation; softmax is handled by softmax_forward.
template <typename T>
void activation_forward(Activation activation, int64_t count, const T* src, T* dst) {
  for (int64_t i = 0; i < count; ++i) {
    T x = src[i];
    switch (activation) {
      case Activation::linear: dst[i] = x; break;
      case Activation::relu: dst[i] = x > 0 ? x : T(0); break;
      case Activation::sigmoid: dst[i] = T(1) / (T(1) + std::exp(-x)); break;
      case Activation::tanh: dst[i] = std::tanh(x); break;
      case Activation::softmax: softmax_forward<T>(1, count, src, dst); return;
    }
  }
}

/// Elementwise gradient from the activation's output `dst`.
template <typename T>
void activation_backward(Activation activation, int64_t count, const T* dst, const T* diff_dst,
                         T* diff_src) {
  if (activation == Activation::softmax) {
    softmax_backward<T>(1, count, dst, diff_dst, diff_src);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    T y = dst[i], dy = diff_dst[i];
    switch (activation) {
      case Activation::linear: diff_src[i] = dy; break;
      case Activation::relu: diff_src[i] = y > 0 ? dy : T(0); break;
      case Activation::sigmoid: diff_src[i] = dy * y * (T(1) - y); break;
      case Activation::tanh: diff_src[i] = dy * (T(1) - y * y); break;
      case Activation::softmax: break;
    }
  }
}

}  // namespace tenfold::kernels::reference
