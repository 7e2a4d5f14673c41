#pragma once
// Conversions between float32 and bfloat16, rounding to nearest even as TensorFlow, JAX and
// oneDNN do, so values Tenfold rounds equal those Keras' mixed_bfloat16 policy computes with.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "core/tensor.h"

namespace tenfold::kernels {

// Loops over many values take bfloat16 as its bits (uint16_t): GCC vectorizes them over plain
// integers, not over a struct.

/// The bits of the bfloat16 nearest `value` (ties to even; NaN stays NaN).
inline uint16_t bfloat16_bits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return nan ? uint16_t((bits >> 16) | 0x40) : uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

/// The float a bfloat16's bits stand for (exact).
inline float float_from_bits(uint16_t bits) { return std::bit_cast<float>(uint32_t(bits) << 16); }

inline bfloat16 to_bfloat16(float value) { return {bfloat16_bits(value)}; }
inline float to_float(bfloat16 value) { return float_from_bits(value.bits); }

/// An element of a loop written once for float32 and bfloat16 (as bits): read as a float,
/// assigned from one (rounded to nearest even).
inline float as_float(float value) { return value; }
inline float as_float(uint16_t bits) { return float_from_bits(bits); }
inline void assign(float& element, float value) { element = value; }
inline void assign(uint16_t& element, float value) { element = bfloat16_bits(value); }

/// Calls run(Element{}) with Element the loop type of `dtype`: float, or uint16_t for
/// bfloat16; the caller casts its untyped pointers to Element.
template <typename Run>
void with_element_type(DType dtype, Run run) {
  if (dtype == DType::bfloat16) {
    run(uint16_t{});
  } else {
    run(float{});
  }
}

/// A number of TensorFlow's bfloat16 arithmetic, as Keras updates a bfloat16 variable: every
/// operation computes in float32 on bfloat16 values and rounds its result to bfloat16. Nothing
/// converts implicitly, so no operation can skip its rounding. A formula written once for a
/// `Number` runs with float (float32 arithmetic) or with this.
class Bfloat16Number {
 public:
  /// `value` rounded to bfloat16 (Keras' ops.cast to the variable's dtype).
  explicit Bfloat16Number(float value) : value_(float_from_bits(bfloat16_bits(value))) {}
  explicit operator float() const { return value_; }

  friend Bfloat16Number operator+(Bfloat16Number a, Bfloat16Number b) { return Bfloat16Number(a.value_ + b.value_); }
  friend Bfloat16Number operator-(Bfloat16Number a, Bfloat16Number b) { return Bfloat16Number(a.value_ - b.value_); }
  friend Bfloat16Number operator*(Bfloat16Number a, Bfloat16Number b) { return Bfloat16Number(a.value_ * b.value_); }
  friend Bfloat16Number operator/(Bfloat16Number a, Bfloat16Number b) { return Bfloat16Number(a.value_ / b.value_); }
  friend Bfloat16Number sqrt(Bfloat16Number a) { return Bfloat16Number(std::sqrt(a.value_)); }
  friend Bfloat16Number pow(Bfloat16Number a, Bfloat16Number b) { return Bfloat16Number(std::pow(a.value_, b.value_)); }
  friend Bfloat16Number max(Bfloat16Number a, Bfloat16Number b) { return Bfloat16Number(std::max(a.value_, b.value_)); }
  friend Bfloat16Number abs(Bfloat16Number a) { return Bfloat16Number(std::abs(a.value_)); }

 private:
  float value_;
};

/// The float32 forms of Bfloat16Number's functions: a formula brings them in with `using` and
/// calls them unqualified.
inline float sqrt(float a) { return std::sqrt(a); }
inline float pow(float a, float b) { return std::pow(a, b); }
inline float max(float a, float b) { return std::max(a, b); }
inline float abs(float a) { return std::abs(a); }

void to_bfloat16(const float* from, bfloat16* to, int64_t count);
void to_float(const bfloat16* from, float* to, int64_t count);
/// to[i] = from[i] rounded to the nearest bfloat16, kept as a float.
void round_to_bfloat16(const float* from, float* to, int64_t count);
/// Copies `from` into `to` (same element count), converting between float32 and bfloat16.
void convert(const Tensor& from, Tensor& to);
/// to[i] += from[i] in `to`'s dtype (float32 or bfloat16): gradients summed over consumers.
void add_into(const Tensor& from, Tensor& to);

}  // namespace tenfold::kernels
