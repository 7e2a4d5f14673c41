#pragma once
// A dense, row-major tensor. Owning tensors hold 64-byte aligned storage shared between copies
// (copying a Tensor never copies data); views wrap memory owned elsewhere, such as a step's arena.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/shape.h"

namespace tenfold {

enum class DType { float32, bfloat16, int32, uint8 };

/// A bfloat16 value's bits: float32's sign, exponent and top 7 mantissa bits (kernels/bfloat16.h
/// converts).
struct bfloat16 {
  uint16_t bits;
};

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::float32; }
template <> constexpr DType dtype_of<bfloat16>() { return DType::bfloat16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::int32; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::uint8; }

/// `bytes` rounded up to allocate_aligned's 64-byte alignment.
constexpr size_t aligned_size(size_t bytes) { return (bytes + 63) / 64 * 64; }
/// Allocates `bytes` of 64-byte aligned memory, zeroed unless `zero` is false.
std::shared_ptr<std::byte> allocate_aligned(size_t bytes, bool zero = true);
/// Bytes allocated by allocate_aligned and not yet freed: every tensor, arena and kernel
/// scratchpad (memory checks measure compiled steps with it).
size_t allocated_bytes();

class Tensor {
 public:
  Tensor() = default;
  /// A new zero-filled tensor.
  explicit Tensor(Shape shape, DType dtype = DType::float32);
  /// A new tensor whose contents are left as they are: for a caller that writes all of it.
  static Tensor uninitialized(Shape shape, DType dtype = DType::float32);
  /// A view of memory owned by someone else; valid while that memory lives.
  static Tensor view(void* data, Shape shape, DType dtype = DType::float32);

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int64_t num_elements() const { return shape_.num_elements(); }
  size_t num_bytes() const { return static_cast<size_t>(num_elements()) * dtype_size(dtype_); }
  bool empty() const { return data_ == nullptr; }

  template <typename T> T* data() { check_dtype(dtype_of<T>()); return static_cast<T*>(data_); }
  template <typename T> const T* data() const {
    check_dtype(dtype_of<T>());
    return static_cast<const T*>(data_);
  }
  template <typename T> std::span<T> values() { return {data<T>(), size_t(num_elements())}; }
  template <typename T> std::span<const T> values() const {
    return {data<T>(), size_t(num_elements())};
  }
  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }

  /// The same memory seen with another shape of the same element count.
  Tensor reshaped(Shape shape) const;
  /// Rows [begin, end) of the first dimension, sharing memory.
  Tensor slice_batch(int64_t begin, int64_t end) const;
  /// Row `index` of the first dimension, without that dimension, sharing memory.
  Tensor row(int64_t index) const;
  /// A deep copy with its own storage.
  Tensor clone() const;
  void fill_zero();

 private:
  void check_dtype(DType expected) const;

  std::shared_ptr<std::byte> storage_;  // null for views
  void* data_ = nullptr;
  Shape shape_;
  DType dtype_ = DType::float32;
};

}  // namespace tenfold
