#include "core/tensor.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace tenfold {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::float32: return 4;
    case DType::bfloat16: return 2;
    case DType::int32: return 4;
    case DType::uint8: return 1;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::bfloat16: return "bfloat16";
    case DType::int32: return "int32";
    case DType::uint8: return "uint8";
  }
  return "unknown";
}

namespace {

std::atomic<size_t> live_bytes{0};

}  // namespace

size_t allocated_bytes() { return live_bytes.load(std::memory_order_relaxed); }

std::shared_ptr<std::byte> allocate_aligned(size_t bytes, bool zero) {
  constexpr size_t alignment = 64;
  size_t rounded = aligned_size(bytes);
  if (rounded == 0) rounded = alignment;
  void* memory = std::aligned_alloc(alignment, rounded);
  if (memory == nullptr) {
    throw Error(ErrorCode::resource_exhausted,
                "could not allocate " + std::to_string(bytes) + " bytes; use a smaller batch size");
  }
  if (zero) std::memset(memory, 0, rounded);
  live_bytes += rounded;
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(memory), [rounded](std::byte* p) {
    live_bytes -= rounded;
    std::free(p);
  });
}

Tensor::Tensor(Shape shape, DType dtype) : shape_(std::move(shape)), dtype_(dtype) {
  for (int64_t dim : shape_.dims()) check_argument(dim >= 0, "negative dimension in shape " + shape_.to_string());
  storage_ = allocate_aligned(num_bytes());
  data_ = storage_.get();
}

Tensor Tensor::uninitialized(Shape shape, DType dtype) {
  Tensor tensor;
  tensor.shape_ = std::move(shape);
  tensor.dtype_ = dtype;
  tensor.storage_ = allocate_aligned(tensor.num_bytes(), false);
  tensor.data_ = tensor.storage_.get();
  return tensor;
}

Tensor Tensor::view(void* data, Shape shape, DType dtype) {
  Tensor tensor;
  tensor.data_ = data;
  tensor.shape_ = std::move(shape);
  tensor.dtype_ = dtype;
  return tensor;
}

Tensor Tensor::reshaped(Shape shape) const {
  // NOTE: `if` before building messages: these run per element in input pipelines.
  if (shape.num_elements() != num_elements()) {
    throw Error(ErrorCode::invalid_argument, "cannot reshape " + shape_.to_string() + " to " +
                                                 shape.to_string() + ": element counts differ");
  }
  Tensor result = *this;
  result.shape_ = std::move(shape);
  return result;
}

Tensor Tensor::slice_batch(int64_t begin, int64_t end) const {
  if (!(shape_.rank() >= 1 && 0 <= begin && begin <= end && end <= shape_[0])) {
    throw Error(ErrorCode::invalid_argument, "batch slice [" + std::to_string(begin) + ", " +
                                                 std::to_string(end) +
                                                 ") is outside a tensor of shape " +
                                                 shape_.to_string());
  }
  Tensor result = *this;
  size_t row_bytes = num_bytes() / static_cast<size_t>(shape_[0] == 0 ? 1 : shape_[0]);
  result.data_ = static_cast<std::byte*>(data_) + static_cast<size_t>(begin) * row_bytes;
  result.shape_ = shape_.with_batch(end - begin);
  return result;
}

Tensor Tensor::row(int64_t index) const {
  Tensor result = slice_batch(index, index + 1);
  result.shape_ = shape_.without_batch();
  return result;
}

Tensor Tensor::clone() const {
  Tensor copy(shape_, dtype_);
  if (num_bytes() > 0) std::memcpy(copy.data_, data_, num_bytes());
  return copy;
}

void Tensor::fill_zero() {
  if (num_bytes() > 0) std::memset(data_, 0, num_bytes());
}

void Tensor::check_dtype(DType expected) const {
  if (expected != dtype_) {
    throw Error(ErrorCode::invalid_argument, std::string("tensor holds ") + dtype_name(dtype_) +
                                                 ", accessed as " + dtype_name(expected));
  }
}

}  // namespace tenfold
