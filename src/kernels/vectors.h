#pragma once
// Explicit 16-lane vectors (GCC vector extensions: a float one is one AVX-512 register) for the
// kernels whose loops GCC does not vectorize well by itself: few_channel_conv.cpp (sums kept in
// registers across the taps), tiling_pool.cpp (16-channel pixels).
#include <cstdint>
#include <cstring>

namespace tenfold::kernels::vectors {

constexpr int64_t lanes = 16;
using Floats = float __attribute__((vector_size(lanes * sizeof(float))));
using Ints = int32_t __attribute__((vector_size(lanes * sizeof(int32_t))));
using Uints = uint32_t __attribute__((vector_size(lanes * sizeof(uint32_t))));
using Shorts = uint16_t __attribute__((vector_size(lanes * sizeof(uint16_t))));  // bfloat16 bits
using Bytes = int8_t __attribute__((vector_size(lanes)));

/// A vector from `from`, aligned or not.
template <typename Vector = Floats, typename Element>
Vector load(const Element* from) {
  Vector v;
  std::memcpy(&v, from, sizeof(v));
  return v;
}

/// `v` to `to`, aligned or not.
template <typename Vector, typename Element>
void store(Element* to, const Vector& v) {
  std::memcpy(to, &v, sizeof(v));
}

/// The sum of `v`'s lanes.
inline float sum(const Floats& v) {
  float total = 0;
  for (int64_t lane = 0; lane < lanes; ++lane) total += v[lane];
  return total;
}

}  // namespace tenfold::kernels::vectors
