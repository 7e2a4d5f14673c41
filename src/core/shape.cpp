#include "core/shape.h"

#include "core/error.h"

namespace tenfold {

int64_t Shape::num_elements() const {
  int64_t count = 1;
  for (int64_t dim : dims_) count *= dim;
  return count;
}

Shape Shape::with_batch(int64_t batch) const {
  check_argument(!dims_.empty(), "a scalar shape has no batch dimension");
  Shape result = *this;
  result.dims_[0] = batch;
  return result;
}

Shape Shape::with_leading(int64_t batch) const {
  std::vector<int64_t> dims = {batch};
  dims.insert(dims.end(), dims_.begin(), dims_.end());
  return Shape(std::move(dims));
}

Shape Shape::without_batch() const {
  check_argument(!dims_.empty(), "a scalar shape has no batch dimension");
  return Shape(std::vector<int64_t>(dims_.begin() + 1, dims_.end()));
}

std::string Shape::to_string(bool batch_is_none) const {
  std::string text = "(";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) text += ", ";
    text += (i == 0 && batch_is_none) ? "None" : std::to_string(dims_[i]);
  }
  if (dims_.size() == 1) text += ",";
  return text + ")";
}

std::vector<int64_t> broadcast_indices(const Shape& shape, const Shape& from) {
  std::vector<int64_t> indices(size_t(shape.num_elements()));
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    int64_t rest = i, at = 0, stride = 1;
    for (int64_t axis = shape.rank(); axis-- > 0;) {
      const int64_t coordinate = rest % shape[axis];
      rest /= shape[axis];
      if (from[axis] != 1) at += coordinate * stride;
      stride *= from[axis];
    }
    indices[size_t(i)] = at;
  }
  return indices;
}

}  // namespace tenfold
