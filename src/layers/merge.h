#pragma once
// Keras' merge layers, called on a list of tensors: Add, Subtract, Multiply, Average, Maximum,
// Minimum (elementwise, broadcasting axes of size 1 as Keras does) and Concatenate (along an
// axis).
#include "kernels/window.h"
#include "layers/layer.h"

namespace tenfold::layers {

class Merge : public Layer {
 public:
  bool takes_input_list() const override { return true; }
  /// Merge layers take a list: the one-input forms are an error.
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;

 protected:
  using Layer::Layer;
  /// "layer 'add' (Add)" for errors.
  std::string describe() const;
};

enum class ElementwiseOp { add, subtract, multiply, average, maximum, minimum };

class Elementwise : public Merge {
 public:
  Elementwise(ElementwiseOp op, const std::string& name);
  std::string class_name() const override;
  Shape output_shape_for(const std::vector<Shape>& input_shapes) const override;
  std::unique_ptr<LayerStep> compile_for(const std::vector<Shape>& input_shapes,
                                         const CompileOptions& options) override;
  /// The same followed by an elementwise activation (not softmax) in place on the output: the
  /// graph fuses an Activation layer that reads only this merge into it. `dtype` as
  /// CompileOptions::compute_dtype.
  std::unique_ptr<LayerStep> compile_with_activation(const std::vector<Shape>& input_shapes,
                                                     kernels::Activation activation, DType dtype);

 private:
  ElementwiseOp op_;
};

struct Add : Elementwise { explicit Add(const std::string& name = "") : Elementwise(ElementwiseOp::add, name) {} };
struct Subtract : Elementwise { explicit Subtract(const std::string& name = "") : Elementwise(ElementwiseOp::subtract, name) {} };
struct Multiply : Elementwise { explicit Multiply(const std::string& name = "") : Elementwise(ElementwiseOp::multiply, name) {} };
struct Average : Elementwise { explicit Average(const std::string& name = "") : Elementwise(ElementwiseOp::average, name) {} };
struct Maximum : Elementwise { explicit Maximum(const std::string& name = "") : Elementwise(ElementwiseOp::maximum, name) {} };
struct Minimum : Elementwise { explicit Minimum(const std::string& name = "") : Elementwise(ElementwiseOp::minimum, name) {} };

/// Joins its inputs along `axis` (counted with the batch dimension, -1 the last, as Keras);
/// every other dimension must agree.
class Concatenate : public Merge {
 public:
  explicit Concatenate(int64_t axis = -1, const std::string& name = "");
  std::string class_name() const override { return "Concatenate"; }
  Shape output_shape_for(const std::vector<Shape>& input_shapes) const override;
  std::unique_ptr<LayerStep> compile_for(const std::vector<Shape>& input_shapes,
                                         const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 private:
  /// The axis as a non-negative index for inputs of `rank`.
  int64_t resolved_axis(int64_t rank) const;
  int64_t axis_;
};

}  // namespace tenfold::layers
