#pragma once
// A tensor's dimensions. Image tensors are channels-last (NHWC), as in Keras.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace tenfold {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t operator[](int64_t axis) const { return dims_.at(static_cast<size_t>(axis)); }
  int64_t& operator[](int64_t axis) { return dims_.at(static_cast<size_t>(axis)); }
  const std::vector<int64_t>& dims() const { return dims_; }
  /// Product of all dimensions (1 for a scalar).
  int64_t num_elements() const;
  /// The same shape with the first (batch) dimension replaced.
  Shape with_batch(int64_t batch) const;
  /// This (sample) shape with a batch dimension in front.
  Shape with_leading(int64_t batch) const;
  /// The shape without its first (batch) dimension.
  Shape without_batch() const;
  /// "(None, 26, 26, 32)" style when `batch_is_none`, else "(512, 26, 26, 32)".
  std::string to_string(bool batch_is_none = false) const;

  bool operator==(const Shape& other) const = default;

 private:
  std::vector<int64_t> dims_;
};

/// For each element of `shape` (row-major), the index of the element of `from` it reads when
/// `from` is broadcast to it: `from` has shape's rank, each axis of the same size or 1.
std::vector<int64_t> broadcast_indices(const Shape& shape, const Shape& from);

}  // namespace tenfold
