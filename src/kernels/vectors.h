#pragma once
// Explicit vectors of one register (GCC vector extensions: 16 floats on AVX-512, 8 on AVX2) for
// the kernels whose loops GCC does not vectorize well by itself: few_channel_conv.cpp and
// direct_conv.cpp (sums kept in registers across the taps), tiling_pool.cpp (a vector of
// channels per pixel).
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tenfold::kernels::vectors {

// One register: 16 floats on AVX-512; 8 on AVX2, where 16-float vectors (two registers, some
// operations lowered lane by lane) ran these kernels 3-17x slower than oneDNN's.
#if defined(__AVX512F__)
constexpr int64_t lanes = 16;
#else
constexpr int64_t lanes = 8;
#endif
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

/// 16 values from `from` as floats: float32, or bfloat16 bits widened (exact).
inline Floats load_floats(const float* from) { return load<Floats>(from); }
inline Floats load_floats(const uint16_t* from) {
  return reinterpret_cast<Floats>(__builtin_convertvector(load<Shorts>(from), Uints) << 16);
}

/// `v` rounded to bfloat16's precision (to nearest even; NaN stays NaN), as bfloat16_bits
/// rounds one value, still as floats.
inline Floats rounded_to_bfloat16(Floats v) {
  const Uints bits = reinterpret_cast<Uints>(v);
  const Uints rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  // The comparison inside the selection: GCC then blends under its mask (kept as a vector of
  // -1 and 0, it spent three instructions making and testing that vector).
  return reinterpret_cast<Floats>(((bits & 0x7fffffffu) > 0x7f800000u ? bits | 0x400000u : rounded) & 0xffff0000u);
}

/// Stores `v` as float32, or as bfloat16 rounded to nearest even (NaN stays NaN).
inline void store_floats(float* to, Floats v) { store(to, v); }
inline void store_floats(uint16_t* to, Floats v) {
  store(to, __builtin_convertvector(reinterpret_cast<Uints>(rounded_to_bfloat16(v)) >> 16, Shorts));
}

/// `v` as `Destination` (float, or bfloat16 bits) holds it: float32 as it is, or rounded to
/// bfloat16. Max pooling into bfloat16 compares values once rounded, as when a bfloat16
/// convolution's output is pooled: the first of values equal once rounded wins.
template <typename Destination>
Floats as_destination(Floats v) {
  if constexpr (std::is_same_v<Destination, float>) {
    return v;
  } else {
    return rounded_to_bfloat16(v);
  }
}

/// A max pooling window's running maximum: best and where take value and position in the lanes
/// where value is greater (the first of equal values stays). Positions are kept in int32 lanes
/// and narrowed to bytes once, by store_positions: narrowed at each comparison, AVX2 moved them
/// lane by lane (the recipe's pooled 1 -> 32 3x3 forward, 1 thread, 256 images: 4.9 -> 2.4 ms).
inline void keep_greater(Floats value, int32_t position, Floats& best, Ints& where) {
  const Ints greater = value > best;  // -1 or 0 per lane
  best = greater ? value : best;
  where = greater ? Ints{} + position : where;
}

/// Stores `positions` (each 0..127) as bytes.
inline void store_positions(uint8_t* to, Ints positions) {
#if defined(__AVX2__) && !defined(__AVX512F__)
  // Two packs: GCC converts an 8-lane vector to bytes lane by lane.
  const __m256i wide = reinterpret_cast<__m256i>(positions);
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(wide), _mm256_extracti128_si256(wide, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(to), _mm_packs_epi16(words, words));
#else
  store(to, __builtin_convertvector(positions, Bytes));
#endif
}

/// Stores `v`, whose values the destination's type holds exactly (as_destination's): bfloat16
/// without rounding again.
inline void store_exact(float* to, Floats v) { store(to, v); }
inline void store_exact(uint16_t* to, Floats v) {
  store(to, __builtin_convertvector(reinterpret_cast<Uints>(v) >> 16, Shorts));
}

/// Lane l of the result is lane index[l] of a's and b's 32 lanes (0-15 a's, 16-31 b's; taken
/// modulo 32): one vpermt2ps. GCC's builtin takes indices known only at run time; Clang's
/// (the sanitizer builds') needs constants, so there it goes lane by lane.
inline Floats shuffle(const Floats& a, const Floats& b, const Ints& index) {
#if defined(__clang__)
  Floats result;
  for (int64_t lane = 0; lane < lanes; ++lane) {
    const int32_t source = index[lane] & int32_t(2 * lanes - 1);
    result[lane] = source < lanes ? a[source] : b[source - lanes];
  }
  return result;
#else
  return __builtin_shuffle(a, b, index);
#endif
}

/// The sum of `v`'s lanes.
inline float sum(const Floats& v) {
  float total = 0;
  for (int64_t lane = 0; lane < lanes; ++lane) total += v[lane];
  return total;
}

}  // namespace tenfold::kernels::vectors
