#pragma once
// Conversions between float32 and bfloat16, rounding to nearest even as TensorFlow, JAX and
// oneDNN do, so values Tenfold rounds equal those Keras' mixed_bfloat16 policy computes with.
#include <cstdint>
#include <cstring>

#include "core/tensor.h"

namespace tenfold::kernels {

inline bfloat16 to_bfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return {uint16_t((bits >> 16) | 0x40)};  // NaN stays NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return {uint16_t(bits >> 16)};
}

inline float to_float(bfloat16 value) {
  const uint32_t bits = uint32_t(value.bits) << 16;
  float result;
  std::memcpy(&result, &bits, sizeof result);
  return result;
}

void to_bfloat16(const float* from, bfloat16* to, int64_t count);
void to_float(const bfloat16* from, float* to, int64_t count);
/// to[i] = from[i] rounded to the nearest bfloat16, kept as a float.
void round_to_bfloat16(const float* from, float* to, int64_t count);
/// Copies `from` into `to` (same element count), converting between float32 and bfloat16.
void convert(const Tensor& from, Tensor& to);
/// to[i] += from[i] in `to`'s dtype (float32 or bfloat16): gradients summed over consumers.
void add_into(const Tensor& from, Tensor& to);

}  // namespace tenfold::kernels
