#pragma once
// A named weight. Its value lives in the layout the kernels run fastest with (which may be
// blocked and padded); Keras' layout is used only to assign, read, save and load.
#include <memory>
#include <string>

#include "core/tensor.h"
#include "layers/constraints.h"
#include "layers/regularizers.h"

namespace tenfold {

/// Converts a weight between Keras' layout and a kernel's native layout.
class WeightLayout {
 public:
  virtual ~WeightLayout() = default;
  /// Floats in the native layout (at least the Keras element count; padding stays zero).
  virtual int64_t native_elements() const = 0;
  virtual void from_keras(const float* keras, float* native) const = 0;
  virtual void to_keras(const float* native, float* keras) const = 0;
};

class Variable {
 public:
  /// `layout` null means the native layout is Keras' own. A variable that is not
  /// `trainable` is state the layer updates itself (BatchNormalization's moving statistics),
  /// never the optimizer.
  Variable(std::string name, Shape shape, std::shared_ptr<const WeightLayout> layout,
           bool trainable = true);

  /// Name inside its layer, e.g. "kernel" (a path segment in model files).
  const std::string& name() const { return name_; }
  /// Keras shape, e.g. (3, 3, 1, 32) for a Conv2D kernel.
  const Shape& shape() const { return shape_; }
  bool trainable() const { return trainable_; }
  /// True for a variable Keras keeps as an integer (Normalization's count): files store it as
  /// an int64 scalar. Its value is a float holding the integer; its dtype stays float32.
  bool integer() const { return integer_; }
  void set_integer(bool integer);
  /// The dtype Keras keeps it in: float32, or bfloat16 under the bfloat16 policy. The value is
  /// float32 storage either way; a bfloat16 variable holds only bfloat16 values (assign rounds,
  /// and so does setting the dtype).
  DType dtype() const { return dtype_; }
  void set_dtype(DType dtype);
  /// Rounds the value to the dtype, after code that wrote it in float32 (a layer's state).
  void round_to_dtype();
  /// Keras' regularizer (a penalty added to the loss) and constraint (a projection after each
  /// update) of this weight; empty when none.
  const std::optional<Regularizer>& regularizer() const { return regularizer_; }
  const std::optional<Constraint>& constraint() const { return constraint_; }
  void set_regularizer(std::optional<Regularizer> regularizer) { regularizer_ = regularizer; }
  void set_constraint(std::optional<Constraint> constraint) { constraint_ = std::move(constraint); }
  /// Storage in the native layout, flat.
  Tensor& value() { return value_; }
  const Tensor& value() const { return value_; }

  /// Sets the value from a tensor of shape(), in Keras' layout.
  void assign(const Tensor& keras_value);
  /// The value in Keras' layout, shape().
  Tensor read() const { return to_keras_layout(value_); }
  /// Any tensor in this variable's native layout (its gradient, an optimizer slot) converted
  /// to Keras' layout, shape().
  Tensor to_keras_layout(const Tensor& native) const;
  /// The inverse: a tensor of shape() in Keras' layout written into `native` (an optimizer
  /// slot of this variable), rounded to dtype().
  void from_keras_layout(const Tensor& keras_value, Tensor& native) const;

 private:
  std::string name_;
  Shape shape_;
  std::shared_ptr<const WeightLayout> layout_;
  bool trainable_;
  bool integer_ = false;
  DType dtype_ = DType::float32;
  std::optional<Regularizer> regularizer_;
  std::optional<Constraint> constraint_;
  Tensor value_;
};

/// An optional weight's values (BatchNormalization's gamma without scale=True): null when absent.
inline const float* data_or_null(const Variable* variable) {
  return variable ? variable->value().data<float>() : nullptr;
}

}  // namespace tenfold
