#pragma once
// Plain C++ dense layer (the test oracle): Keras kernel layout [in, units].

#include <cstdint>

namespace tenfold::kernels::reference {

/// src [rows, in], kernel [in, units], bias [units] or null -> dst [rows, units]
template <typename T>
void dense_forward(int64_t rows, int64_t in, int64_t units, const T* src, const T* kernel,
                   const T* bias, T* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t u = 0; u < units; ++u) {
      T sum = bias ? bias[u] : T(0);
      for (int64_t i = 0; i < in; ++i) sum += src[r * in + i] * kernel[i * units + u];
      dst[r * units + u] = sum;
    }
}

/// Gradients of dense_forward; null outputs are skipped, the others overwritten.
template <typename T>
void dense_backward(int64_t rows, int64_t in, int64_t units, const T* src, const T* kernel,
                    const T* diff_dst, T* diff_src, T* diff_kernel, T* diff_bias) {
  if (diff_src)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < in; ++i) {
        T sum = 0;
        for (int64_t u = 0; u < units; ++u) sum += diff_dst[r * units + u] * kernel[i * units + u];
        diff_src[r * in + i] = sum;
      }
  if (diff_kernel)
    for (int64_t i = 0; i < in; ++i)
      for (int64_t u = 0; u < units; ++u) {
        T sum = 0;
        for (int64_t r = 0; r < rows; ++r) sum += src[r * in + i] * diff_dst[r * units + u];
        diff_kernel[i * units + u] = sum;
      }
  if (diff_bias)
    for (int64_t u = 0; u < units; ++u) {
      T sum = 0;
      for (int64_t r = 0; r < rows; ++r) sum += diff_dst[r * units + u];
      diff_bias[u] = sum;
    }
}

}  // namespace tenfold::kernels::reference
