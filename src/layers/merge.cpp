#include "layers/merge.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kernels/bfloat16.h"
#include "kernels/onednn/activation.h"

namespace tenfold::layers {

namespace {

const char* op_class_name(ElementwiseOp op) {
  switch (op) {
    case ElementwiseOp::add: return "Add";
    case ElementwiseOp::subtract: return "Subtract";
    case ElementwiseOp::multiply: return "Multiply";
    case ElementwiseOp::average: return "Average";
    case ElementwiseOp::maximum: return "Maximum";
    case ElementwiseOp::minimum: return "Minimum";
  }
  return "?";
}

const char* op_snake_name(ElementwiseOp op) {
  switch (op) {
    case ElementwiseOp::add: return "add";
    case ElementwiseOp::subtract: return "subtract";
    case ElementwiseOp::multiply: return "multiply";
    case ElementwiseOp::average: return "average";
    case ElementwiseOp::maximum: return "maximum";
    case ElementwiseOp::minimum: return "minimum";
  }
  return "?";
}

std::string shape_list(const std::vector<Shape>& shapes) {
  std::string text;
  for (const Shape& shape : shapes) text += (text.empty() ? "" : ", ") + shape.to_string(true);
  return text;
}

/// out[i] = combine(a[i], b[i]) over n elements, one pass.
template <typename Combine>
void combine_into(float* out, const float* a, const float* b, int64_t n, Combine combine) {
  for (int64_t i = 0; i < n; ++i) out[i] = combine(a[i], b[i]);
}

float apply(ElementwiseOp op, float x, float y) {
  switch (op) {
    case ElementwiseOp::add:
    case ElementwiseOp::average: return x + y;
    case ElementwiseOp::subtract: return x - y;
    case ElementwiseOp::multiply: return x * y;
    case ElementwiseOp::maximum: return std::max(x, y);
    case ElementwiseOp::minimum: return std::min(x, y);
  }
  return 0;
}

/// Where each input's values lie in the output: per input, per axis of the output, the
/// stride of that axis in the input (0 along the axes it is broadcast over, size 1 in it).
std::vector<std::vector<int64_t>> broadcast_strides(const std::vector<Shape>& inputs, const Shape& output) {
  std::vector<std::vector<int64_t>> strides;
  for (const Shape& input : inputs) {
    std::vector<int64_t> input_strides(size_t(output.rank()));
    int64_t stride = 1;
    for (int64_t axis = output.rank(); axis-- > 0;) {
      input_strides[size_t(axis)] = input[axis] == output[axis] ? stride : 0;
      stride *= input[axis];
    }
    strides.push_back(std::move(input_strides));
  }
  return strides;
}

/// The merge, then (when fused) an activation in place on its output. Inputs of the output's
/// shape combine elementwise in one pass per input; when some are broadcast (size 1 along an
/// axis, as a squeeze-and-excitation's [N, 1, 1, C] scale), the output is walked row by row
/// of its last axis, each input read through its broadcast strides, and a broadcast input's
/// gradient sums over the axes it was broadcast along.
class ElementwiseStep : public LayerStep {
 public:
  /// Computes in `dtype` when that is float32 or the merge a sum or difference of inputs of
  /// one shape with an activation the kernel runs in bfloat16; else in float32.
  ElementwiseStep(ElementwiseOp op, kernels::Activation activation, const std::vector<Shape>& inputs,
                  const Shape& shape, DType dtype)
      : op_(op),
        shape_(shape),
        broadcast_(std::any_of(inputs.begin(), inputs.end(), [&](const Shape& input) { return input != shape; })),
        dtype_(!broadcast_ && inputs.size() >= 2 && (op == ElementwiseOp::add || op == ElementwiseOp::subtract) &&
                       kernels::onednn::runs_in_bfloat16(activation)
                   ? dtype
                   : DType::float32),
        activation_(activation, shape.num_elements() / shape[shape.rank() - 1], shape[shape.rank() - 1],
                    kernels::onednn::data_type_of(dtype_)),
        strides_(broadcast_strides(inputs, shape)) {}

  DType compute_dtype() const override { return dtype_; }

  void forward(std::span<const Tensor> inputs, Tensor& output, bool) override {
    if (dtype_ == DType::bfloat16) {
      sum_in_bfloat16(inputs, output);
      activation_.forward(output.raw_data(), output.raw_data());
      return;
    }
    const int64_t n = output.num_elements();
    float* out = output.data<float>();
    if (broadcast_) {
      for_each_element(inputs.size(), [&](int64_t i, const int64_t* at) {
        float value = inputs[0].data<float>()[at[0]];
        for (size_t k = 1; k < inputs.size(); ++k) value = apply(op_, value, inputs[k].data<float>()[at[k]]);
        out[i] = value;
      });
    } else if (inputs.size() == 1) {
      std::memcpy(out, inputs[0].data<float>(), size_t(n) * sizeof(float));
    }
    for (size_t k = 1; k < inputs.size() && !broadcast_; ++k) {
      // The first pair reads both inputs; the rest fold into the output.
      const float* a = k == 1 ? inputs[0].data<float>() : out;
      const float* b = inputs[k].data<float>();
      switch (op_) {
        case ElementwiseOp::add:
        case ElementwiseOp::average: combine_into(out, a, b, n, [](float x, float y) { return x + y; }); break;
        case ElementwiseOp::subtract: combine_into(out, a, b, n, [](float x, float y) { return x - y; }); break;
        case ElementwiseOp::multiply: combine_into(out, a, b, n, [](float x, float y) { return x * y; }); break;
        case ElementwiseOp::maximum: combine_into(out, a, b, n, [](float x, float y) { return std::max(x, y); }); break;
        case ElementwiseOp::minimum: combine_into(out, a, b, n, [](float x, float y) { return std::min(x, y); }); break;
      }
    }
    if (op_ == ElementwiseOp::average) {
      const float scale = 1.0f / float(inputs.size());
      for (int64_t i = 0; i < n; ++i) out[i] *= scale;
    }
    activation_.forward(out, out);
  }

  void backward(std::span<const Tensor> inputs, const Tensor& output, Tensor& grad_output,
                std::span<Tensor* const> grad_inputs, std::span<Tensor>, bool) override {
    // The activation's derivative from its output, in place; Maximum and Minimum below then
    // need the merge's own output, which only a linear activation leaves in place.
    activation_.backward(nullptr, output.raw_data(), grad_output.raw_data(), grad_output.raw_data());
    if (dtype_ == DType::bfloat16) {
      sum_gradients_in_bfloat16(grad_output, grad_inputs);
      return;
    }
    if (broadcast_) {
      backward_broadcast(inputs, output, grad_output, grad_inputs);
      return;
    }
    const int64_t n = output.num_elements();
    const float* g = grad_output.data<float>();
    const float* out = output.data<float>();
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (grad_inputs[k] == nullptr) continue;
      float* dx = grad_inputs[k]->data<float>();
      switch (op_) {
        case ElementwiseOp::add:
        case ElementwiseOp::subtract:
          if (k == 0 || op_ == ElementwiseOp::add) {
            if (dx != g) std::memcpy(dx, g, size_t(n) * sizeof(float));
          } else {
            for (int64_t i = 0; i < n; ++i) dx[i] = -g[i];
          }
          break;
        case ElementwiseOp::average: {
          const float scale = 1.0f / float(inputs.size());
          for (int64_t i = 0; i < n; ++i) dx[i] = scale * g[i];
          break;
        }
        case ElementwiseOp::multiply: {
          std::memcpy(dx, g, size_t(n) * sizeof(float));
          for (size_t j = 0; j < inputs.size(); ++j) {
            if (j == k) continue;
            const float* other = inputs[j].data<float>();
            for (int64_t i = 0; i < n; ++i) dx[i] *= other[i];
          }
          break;
        }
        case ElementwiseOp::maximum:
        case ElementwiseOp::minimum:
          // The gradient goes to the first input that holds the extreme, as Keras' chain of
          // pairwise maximum(x, y) gives it (ties to x).
          for (int64_t i = 0; i < n; ++i) {
            size_t first = 0;
            while (inputs[first].data<float>()[i] != out[i]) ++first;
            dx[i] = first == k ? g[i] : 0.0f;
          }
          break;
      }
    }
  }

  int input_sharing_gradient() const override {
    if (broadcast_) return -1;
    return op_ == ElementwiseOp::add || op_ == ElementwiseOp::subtract ? 0 : -1;
  }

 private:
  /// visit(i, at) for each output element i, with at[k] the index of input k's value for it.
  template <typename Visit>
  void for_each_element(size_t inputs, const Visit& visit) const {
    const int64_t last = shape_[shape_.rank() - 1], rows = shape_.num_elements() / last;
    std::vector<int64_t> row_start(inputs), at(inputs);
    for (int64_t row = 0; row < rows; ++row) {
      for (size_t k = 0; k < inputs; ++k) {
        int64_t rest = row, start = 0;
        for (int64_t axis = shape_.rank() - 1; axis-- > 0;) {
          start += (rest % shape_[axis]) * strides_[k][size_t(axis)];
          rest /= shape_[axis];
        }
        row_start[k] = start;
      }
      for (int64_t c = 0; c < last; ++c) {
        for (size_t k = 0; k < inputs; ++k) at[k] = row_start[k] + c * strides_[k].back();
        visit(row * last + c, at.data());
      }
    }
  }

  void backward_broadcast(std::span<const Tensor> inputs, const Tensor& output, const Tensor& grad_output,
                          std::span<Tensor* const> grad_inputs) const {
    for (Tensor* grad : grad_inputs) {
      if (grad) std::fill(grad->data<float>(), grad->data<float>() + grad->num_elements(), 0.0f);
    }
    const float* g = grad_output.data<float>();
    const float* out = output.data<float>();
    const float scale = op_ == ElementwiseOp::average ? 1.0f / float(inputs.size()) : 1.0f;
    for_each_element(inputs.size(), [&](int64_t i, const int64_t* at) {
      size_t extreme = 0;  // Maximum and Minimum: the first input that holds the output
      while (extreme + 1 < inputs.size() && inputs[extreme].data<float>()[at[extreme]] != out[i]) ++extreme;
      for (size_t k = 0; k < inputs.size(); ++k) {
        if (grad_inputs[k] == nullptr) continue;
        float contribution = g[i] * scale;
        if (op_ == ElementwiseOp::subtract && k == 1) contribution = -g[i];
        if (op_ == ElementwiseOp::multiply) {
          for (size_t j = 0; j < inputs.size(); ++j) {
            if (j != k) contribution *= inputs[j].data<float>()[at[j]];
          }
        }
        if ((op_ == ElementwiseOp::maximum || op_ == ElementwiseOp::minimum) && k != extreme) contribution = 0;
        grad_inputs[k]->data<float>()[at[k]] += contribution;
      }
    });
  }

  /// Add or Subtract of bfloat16 inputs: summed in float, rounded once.
  void sum_in_bfloat16(std::span<const Tensor> inputs, Tensor& output) const {
    const int64_t n = output.num_elements();
    auto* __restrict out = static_cast<uint16_t*>(output.raw_data());
    const float sign = op_ == ElementwiseOp::subtract ? -1.0f : 1.0f;
    const auto* __restrict first = static_cast<const uint16_t*>(inputs[0].raw_data());
    const auto* __restrict second = static_cast<const uint16_t*>(inputs[1].raw_data());
    for (int64_t i = 0; i < n; ++i) {
      out[i] = kernels::bfloat16_bits(kernels::float_from_bits(first[i]) + sign * kernels::float_from_bits(second[i]));
    }
    for (size_t k = 2; k < inputs.size(); ++k) {
      const auto* __restrict more = static_cast<const uint16_t*>(inputs[k].raw_data());
      for (int64_t i = 0; i < n; ++i) {
        out[i] = kernels::bfloat16_bits(kernels::float_from_bits(out[i]) + kernels::float_from_bits(more[i]));
      }
    }
  }

  /// Their gradients: the output's, negated for a subtracted input (a sign flip in bfloat16).
  void sum_gradients_in_bfloat16(const Tensor& grad_output, std::span<Tensor* const> grad_inputs) const {
    const int64_t n = grad_output.num_elements();
    for (size_t k = 0; k < grad_inputs.size(); ++k) {
      if (grad_inputs[k] == nullptr) continue;
      if (op_ == ElementwiseOp::subtract && k == 1) {
        const auto* __restrict g = static_cast<const uint16_t*>(grad_output.raw_data());
        auto* __restrict dx = static_cast<uint16_t*>(grad_inputs[k]->raw_data());
        for (int64_t i = 0; i < n; ++i) dx[i] = uint16_t(g[i] ^ 0x8000u);
      } else if (grad_inputs[k]->raw_data() != grad_output.raw_data()) {
        std::memcpy(grad_inputs[k]->raw_data(), grad_output.raw_data(), grad_output.num_bytes());
      }
    }
  }

  ElementwiseOp op_;
  Shape shape_;
  bool broadcast_;
  DType dtype_;
  kernels::onednn::ActivationKernel activation_;
  std::vector<std::vector<int64_t>> strides_;
};

/// Inputs [outer, size_k, inner] joined into [outer, sum of size_k, inner].
class ConcatenateStep : public LayerStep {
 public:
  ConcatenateStep(int64_t outer, std::vector<int64_t> blocks) : outer_(outer), blocks_(std::move(blocks)) {}

  void forward(std::span<const Tensor> inputs, Tensor& output, bool) override {
    float* out = output.data<float>();
    const int64_t row = output.num_elements() / outer_;
    int64_t offset = 0;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const float* in = inputs[k].data<float>();
      for (int64_t o = 0; o < outer_; ++o) {
        std::memcpy(out + o * row + offset, in + o * blocks_[k], size_t(blocks_[k]) * sizeof(float));
      }
      offset += blocks_[k];
    }
  }

  void backward(std::span<const Tensor>, const Tensor& output, Tensor& grad_output,
                std::span<Tensor* const> grad_inputs, std::span<Tensor>, bool) override {
    const float* g = grad_output.data<float>();
    const int64_t row = output.num_elements() / outer_;
    int64_t offset = 0;
    for (size_t k = 0; k < grad_inputs.size(); ++k) {
      if (grad_inputs[k] != nullptr) {
        float* dx = grad_inputs[k]->data<float>();
        for (int64_t o = 0; o < outer_; ++o) {
          std::memcpy(dx + o * blocks_[k], g + o * row + offset, size_t(blocks_[k]) * sizeof(float));
        }
      }
      offset += blocks_[k];
    }
  }

 private:
  int64_t outer_;
  std::vector<int64_t> blocks_;  // per input: its elements per outer index
};

}  // namespace

Shape Merge::compute_output_shape(const Shape&) const {
  throw Error(ErrorCode::invalid_argument, describe() + " must be called on a list of inputs");
}

std::unique_ptr<LayerStep> Merge::compile(const Shape& input_shape, const CompileOptions&) {
  return compile_for({input_shape}, {});
}

std::string Merge::describe() const { return "layer '" + name() + "' (" + class_name() + ")"; }

Elementwise::Elementwise(ElementwiseOp op, const std::string& name)
    : Merge(op_snake_name(op), name), op_(op) {}

std::string Elementwise::class_name() const { return op_class_name(op_); }

Shape Elementwise::output_shape_for(const std::vector<Shape>& input_shapes) const {
  check_argument(op_ != ElementwiseOp::subtract || input_shapes.size() == 2,
                 describe() + " takes exactly 2 inputs, got " + std::to_string(input_shapes.size()));
  check_argument(!input_shapes.empty(), describe() + " was called on no inputs");
  // Keras broadcasts: inputs of one rank, each axis of one size or 1.
  Shape output = input_shapes[0];
  for (const Shape& shape : input_shapes) {
    bool compatible = shape.rank() == output.rank();
    for (int64_t axis = 1; compatible && axis < output.rank(); ++axis) {
      compatible = shape[axis] == output[axis] || shape[axis] == 1 || output[axis] == 1;
      if (compatible && output[axis] == 1) output[axis] = shape[axis];
    }
    check_argument(compatible, describe() + " needs inputs of one shape, got " + shape_list(input_shapes) +
                                   " (inputs of one rank broadcast along axes of size 1, as in Keras)");
  }
  return output;
}

std::unique_ptr<LayerStep> Elementwise::compile_for(const std::vector<Shape>& input_shapes,
                                                    const CompileOptions& options) {
  return compile_with_activation(input_shapes, kernels::Activation::linear, options.compute_dtype);
}

std::unique_ptr<LayerStep> Elementwise::compile_with_activation(const std::vector<Shape>& input_shapes,
                                                                kernels::Activation activation, DType dtype) {
  const Shape output = output_shape_for(input_shapes);
  // Maximum and Minimum find the input that holds the output in backward: the output must
  // stay the merge's own.
  if (op_ == ElementwiseOp::maximum || op_ == ElementwiseOp::minimum) {
    if (activation != kernels::Activation::linear) return nullptr;
  }
  return std::make_unique<ElementwiseStep>(op_, activation, input_shapes, output, dtype);
}

Concatenate::Concatenate(int64_t axis, const std::string& name)
    : Merge("concatenate", name), axis_(axis) {}

int64_t Concatenate::resolved_axis(int64_t rank) const {
  const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
  check_argument(axis >= 1 && axis < rank, describe() + ": axis " + std::to_string(axis_) +
                                               " is not a sample axis of inputs of rank " +
                                               std::to_string(rank));
  return axis;
}

Shape Concatenate::output_shape_for(const std::vector<Shape>& input_shapes) const {
  check_argument(!input_shapes.empty(), describe() + " was called on no inputs");
  const int64_t rank = input_shapes[0].rank();
  const int64_t axis = resolved_axis(rank);
  Shape output = input_shapes[0];
  output[axis] = 0;
  for (const Shape& shape : input_shapes) {
    bool agree = shape.rank() == rank;
    for (int64_t d = 1; agree && d < rank; ++d) agree = d == axis || shape[d] == output[d];
    check_argument(agree, describe() + " needs inputs that agree on every axis but axis " +
                              std::to_string(axis_) + ", got " + shape_list(input_shapes));
    output[axis] += shape[axis];
  }
  return output;
}

std::unique_ptr<LayerStep> Concatenate::compile_for(const std::vector<Shape>& input_shapes,
                                                    const CompileOptions&) {
  const Shape output = output_shape_for(input_shapes);
  const int64_t axis = resolved_axis(output.rank());
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= output[d];
  std::vector<int64_t> blocks;
  for (const Shape& shape : input_shapes) blocks.push_back(shape.num_elements() / outer);
  return std::make_unique<ConcatenateStep>(outer, std::move(blocks));
}

nlohmann::json Concatenate::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["axis"] = axis_;
  return config;
}

}  // namespace tenfold::layers
