#include "layers/autocast_step.h"

#include "core/error.h"
#include "kernels/bfloat16.h"

namespace tenfold {

namespace {

/// Whether an input of `input` dtype is rounded to bfloat16's precision in place of a
/// conversion: a float32 input of a float32 kernel whose layer computes in bfloat16, as Keras
/// casts a layer's inputs to its compute dtype (unless the layer takes no cast, `casts_inputs`).
bool rounds_input(bool casts_inputs, DType input, DType kernel, DType layer) {
  return casts_inputs && input == DType::float32 && kernel == DType::float32 && layer == DType::bfloat16;
}

size_t bytes_of(const Shape& shape, DType dtype) {
  return aligned_size(size_t(shape.num_elements()) * dtype_size(dtype));
}

}  // namespace

AutocastStep::AutocastStep(std::unique_ptr<LayerStep> step, const std::vector<Shape>& input_shapes,
                           const std::vector<DType>& input_dtypes, const Shape& output_shape,
                           DType output_dtype, bool casts_inputs, bool input_gradients)
    : step_(std::move(step)),
      output_dtype_(output_dtype),
      inputs_(input_shapes.size()),
      input_shapes_(input_shapes),
      output_shape_(output_shape) {
  const DType inner = step_->compute_dtype();
  for (size_t k = 0; k < inputs_.size(); ++k) {
    Converted& input = inputs_[k];
    input.rounds = rounds_input(casts_inputs, input_dtypes.at(k), inner, output_dtype);
    input.converts = input_dtypes.at(k) != inner || input.rounds;
    // A rounded input's gradient is float32 already: only a converted one needs a copy.
    input.converts_gradient = input_gradients && input.converts && !input.rounds;
    if (input.converts) own_scratch_bytes_ += bytes_of(input_shapes[k], inner);
    if (input.converts_gradient) own_scratch_bytes_ += bytes_of(input_shapes[k], inner);
  }
  output_.converts = output_dtype != step_->output_dtype();
  if (output_.converts) own_scratch_bytes_ += 2 * bytes_of(output_shape, step_->output_dtype());
}

size_t AutocastStep::scratch_bytes() const { return own_scratch_bytes_ + step_->scratch_bytes(); }

void AutocastStep::bind_scratch(std::byte* scratch) {
  auto take = [&](const Shape& shape, DType dtype) {
    Tensor view = Tensor::view(scratch, shape, dtype);
    scratch += bytes_of(shape, dtype);
    return view;
  };
  for (size_t k = 0; k < inputs_.size(); ++k) {
    if (inputs_[k].converts) inputs_[k].value = take(input_shapes_[k], step_->compute_dtype());
    if (inputs_[k].converts_gradient) inputs_[k].gradient = take(input_shapes_[k], step_->compute_dtype());
  }
  if (output_.converts) {
    output_.value = take(output_shape_, step_->output_dtype());
    output_.gradient = take(output_shape_, step_->output_dtype());
  }
  step_->bind_scratch(scratch);  // the step's own, after the copies (live during its calls)
}

bool AutocastStep::needed(const LayerStep& step, DType layer_dtype, const std::vector<DType>& input_dtypes,
                          bool casts_inputs) {
  if (step.output_dtype() != layer_dtype) return true;
  for (DType input : input_dtypes) {
    if (input != step.compute_dtype() || rounds_input(casts_inputs, input, step.compute_dtype(), layer_dtype)) return true;
  }
  return false;
}

const Tensor& AutocastStep::to_step(const Tensor& tensor, Converted& converted) {
  if (!converted.converts) return tensor;
  if (converted.rounds) {
    kernels::round_to_bfloat16(tensor.data<float>(), converted.value.data<float>(), tensor.num_elements());
  } else {
    kernels::convert(tensor, converted.value);
  }
  return converted.value;
}

void AutocastStep::forward(std::span<const Tensor> inputs, Tensor& output, bool training) {
  step_inputs_.clear();
  for (size_t k = 0; k < inputs.size(); ++k) step_inputs_.push_back(to_step(inputs[k], inputs_[k]));
  Tensor& step_output = output_.converts ? output_.value : output;
  step_->forward(step_inputs_, step_output, training);
  if (output_.converts) kernels::convert(step_output, output);
}

void AutocastStep::backward(std::span<const Tensor> inputs, const Tensor& output, Tensor& grad_output,
                            std::span<Tensor* const> grad_inputs, std::span<Tensor> weight_gradients,
                            bool grad_is_for_logits) {
  // The scratch was others' since forward: convert the inputs and output again (the output
  // from its rounded copy, which is what the rest of the model saw).
  step_inputs_.clear();
  for (size_t k = 0; k < inputs.size(); ++k) step_inputs_.push_back(to_step(inputs[k], inputs_[k]));
  const Tensor& step_output = to_step(output, output_);
  Tensor& step_grad_output = output_.converts ? output_.gradient : grad_output;
  if (output_.converts) kernels::convert(grad_output, step_grad_output);
  step_grad_inputs_.clear();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const bool converts = grad_inputs[k] != nullptr && inputs_[k].converts_gradient;
    step_grad_inputs_.push_back(converts ? &inputs_[k].gradient : grad_inputs[k]);
  }
  step_->backward(step_inputs_, step_output, step_grad_output, step_grad_inputs_, weight_gradients,
                  grad_is_for_logits);
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (grad_inputs[k] != nullptr && inputs_[k].converts_gradient) kernels::convert(inputs_[k].gradient, *grad_inputs[k]);
  }
}

}  // namespace tenfold
