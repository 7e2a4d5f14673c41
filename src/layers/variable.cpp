#include "layers/variable.h"

#include <cstring>

#include "core/error.h"
#include "kernels/bfloat16.h"

namespace tenfold {

Variable::Variable(std::string name, Shape shape, std::shared_ptr<const WeightLayout> layout,
                   bool trainable)
    : name_(std::move(name)), shape_(std::move(shape)), layout_(std::move(layout)), trainable_(trainable) {
  int64_t elements = layout_ ? layout_->native_elements() : shape_.num_elements();
  value_ = Tensor(Shape{elements});
}

void Variable::assign(const Tensor& keras_value) { from_keras_layout(keras_value, value_); }

void Variable::set_integer(bool integer) {
  integer_ = integer;
  if (integer) dtype_ = DType::float32;
}

void Variable::set_dtype(DType dtype) {
  check_argument(dtype == DType::float32 || dtype == DType::bfloat16,
                 "weight '" + name_ + "': a variable is float32 or bfloat16");
  if (integer_) return;
  dtype_ = dtype;
  round_to_dtype();
}

void Variable::round_to_dtype() {
  if (dtype_ == DType::bfloat16) kernels::round_to_bfloat16(value_.data<float>(), value_.data<float>(), value_.num_elements());
}

void Variable::from_keras_layout(const Tensor& keras_value, Tensor& native) const {
  check_argument(keras_value.shape() == shape_,
                 "weight '" + name_ + "' has shape " + shape_.to_string() + ", got a value of shape " +
                     keras_value.shape().to_string());
  check_argument(native.num_elements() == value_.num_elements(),
                 "weight '" + name_ + "' stores " + std::to_string(value_.num_elements()) +
                     " values natively, got room for " + std::to_string(native.num_elements()));
  if (layout_) {
    layout_->from_keras(keras_value.data<float>(), native.data<float>());
  } else {
    std::memcpy(native.data<float>(), keras_value.data<float>(), keras_value.num_bytes());
  }
  if (dtype_ == DType::bfloat16) kernels::round_to_bfloat16(native.data<float>(), native.data<float>(), native.num_elements());
}

Tensor Variable::to_keras_layout(const Tensor& native) const {
  check_argument(native.num_elements() == value_.num_elements(),
                 "weight '" + name_ + "' stores " + std::to_string(value_.num_elements()) +
                     " values natively, got " + std::to_string(native.num_elements()));
  Tensor keras_value(shape_);
  if (layout_) {
    layout_->to_keras(native.data<float>(), keras_value.data<float>());
  } else {
    std::memcpy(keras_value.data<float>(), native.data<float>(), keras_value.num_bytes());
  }
  return keras_value;
}

}  // namespace tenfold
