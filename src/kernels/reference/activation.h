#pragma once
// Plain C++ activations (the test oracle), over data seen as [rows, columns]: elementwise
// ones element by element, softmax and log_softmax over each row. Backward takes both the
// activation's input and output, as the fast kernels may use either.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/window.h"

namespace tenfold::kernels::reference {

/// SELU's constants (Klambauer et al.; Keras' and TensorFlow's values).
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

template <typename T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

/// log(1 + exp(x)) without overflow.
template <typename T>
T softplus(T x) {
  return std::max(x, T(0)) + std::log1p(std::exp(-std::abs(x)));
}

template <typename T>
T hard_sigmoid(T x) {  // Keras 3: relu6(x + 3) / 6
  return std::min(std::max(x + T(3), T(0)), T(6)) / T(6);
}

template <typename T>
T activate(const Activation& a, T x) {
  switch (a.kind) {
    case Activation::linear: return x;
    case Activation::relu: return x > 0 ? std::min(x, T(a.max_value)) : T(a.alpha) * x;
    case Activation::sigmoid: return sigmoid(x);
    case Activation::tanh: return std::tanh(x);
    case Activation::elu: return x > 0 ? x : T(a.alpha) * std::expm1(x);
    case Activation::selu: return T(kSeluScale) * (x > 0 ? x : T(kSeluAlpha) * std::expm1(x));
    case Activation::gelu: return T(0.5) * x * (T(1) + std::erf(x / std::sqrt(T(2))));
    case Activation::silu: return x * sigmoid(x);
    case Activation::mish: return x * std::tanh(softplus(x));
    case Activation::softplus: return softplus(x);
    case Activation::softsign: return x / (T(1) + std::abs(x));
    case Activation::hard_sigmoid: return hard_sigmoid(x);
    case Activation::hard_silu: return x * hard_sigmoid(x);
    case Activation::exponential: return std::exp(x);
    case Activation::softmax:
    case Activation::log_softmax: break;  // over rows
  }
  return x;
}

/// d activate / dx at x.
template <typename T>
T derivative(const Activation& a, T x) {
  switch (a.kind) {
    case Activation::linear: return T(1);
    case Activation::relu: return x > 0 ? (x < T(a.max_value) ? T(1) : T(0)) : T(a.alpha);
    case Activation::sigmoid: return sigmoid(x) * (T(1) - sigmoid(x));
    case Activation::tanh: return T(1) - std::tanh(x) * std::tanh(x);
    case Activation::elu: return x > 0 ? T(1) : T(a.alpha) * std::exp(x);
    case Activation::selu: return T(kSeluScale) * (x > 0 ? T(1) : T(kSeluAlpha) * std::exp(x));
    case Activation::gelu: {
      const T pi = T(3.14159265358979323846);
      return T(0.5) * (T(1) + std::erf(x / std::sqrt(T(2)))) +
             x * std::exp(-x * x / T(2)) / std::sqrt(T(2) * pi);
    }
    case Activation::silu: return sigmoid(x) * (T(1) + x * (T(1) - sigmoid(x)));
    case Activation::mish: {
      const T t = std::tanh(softplus(x));
      return t + x * sigmoid(x) * (T(1) - t * t);
    }
    case Activation::softplus: return sigmoid(x);
    case Activation::softsign: return T(1) / ((T(1) + std::abs(x)) * (T(1) + std::abs(x)));
    case Activation::hard_sigmoid: return x > T(-3) && x < T(3) ? T(1) / T(6) : T(0);
    case Activation::hard_silu:
      return hard_sigmoid(x) + (x > T(-3) && x < T(3) ? x / T(6) : T(0));
    case Activation::exponential: return std::exp(x);
    case Activation::softmax:
    case Activation::log_softmax: break;
  }
  return T(1);
}

template <typename T>
void activation_forward(const Activation& a, int64_t rows, int64_t columns, const T* src, T* dst) {
  if (a.kind != Activation::softmax && a.kind != Activation::log_softmax) {
    for (int64_t i = 0; i < rows * columns; ++i) dst[i] = activate(a, src[i]);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = src + r * columns;
    T* y = dst + r * columns;
    T max = x[0];
    for (int64_t c = 1; c < columns; ++c) max = x[c] > max ? x[c] : max;
    T sum = 0;
    for (int64_t c = 0; c < columns; ++c) sum += std::exp(x[c] - max);
    for (int64_t c = 0; c < columns; ++c) {
      y[c] = a.kind == Activation::softmax ? std::exp(x[c] - max) / sum : x[c] - max - std::log(sum);
    }
  }
}

/// diff_src from the input `src`, the output `dst` and diff_dst.
template <typename T>
void activation_backward(const Activation& a, int64_t rows, int64_t columns, const T* src,
                         const T* dst, const T* diff_dst, T* diff_src) {
  if (a.kind != Activation::softmax && a.kind != Activation::log_softmax) {
    for (int64_t i = 0; i < rows * columns; ++i) diff_src[i] = diff_dst[i] * derivative(a, src[i]);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const T* y = dst + r * columns;
    const T* dy = diff_dst + r * columns;
    T* dx = diff_src + r * columns;
    T total = 0;  // softmax: sum dy * y; log_softmax: sum dy
    for (int64_t c = 0; c < columns; ++c) total += a.kind == Activation::softmax ? dy[c] * y[c] : dy[c];
    for (int64_t c = 0; c < columns; ++c) {
      dx[c] = a.kind == Activation::softmax ? y[c] * (dy[c] - total) : dy[c] - std::exp(y[c]) * total;
    }
  }
}

}  // namespace tenfold::kernels::reference
