#pragma once
// Keras' autocasting for steps: a step computing in one dtype run on tensors of another. Under
// mixed_bfloat16 a model's tensors are bfloat16, while most layers' kernels are float32 (and
// model inputs are float32 for bfloat16 kernels): each input is converted to the step's dtype,
// its output back to the output tensor's, and the gradients the same way in backward. A
// float32 input of a float32 kernel whose layer computes in bfloat16 is rounded to bfloat16's
// precision, as Keras casts a layer's inputs to its compute dtype.
#include <memory>
#include <vector>

#include "layers/layer.h"

namespace tenfold {

class AutocastStep : public LayerStep {
 public:
  /// `step` reads step->compute_dtype() and writes step->output_dtype(); the tensors it is
  /// given have these shapes (batch included) and dtypes; its layer's policy computes in
  /// `output_dtype`; `casts_inputs` is Layer::casts_inputs (false: no input is rounded);
  /// `input_gradients` is CompileOptions::need_input_gradient.
  AutocastStep(std::unique_ptr<LayerStep> step, const std::vector<Shape>& input_shapes,
               const std::vector<DType>& input_dtypes, const Shape& output_shape, DType output_dtype,
               bool casts_inputs, bool input_gradients);
  /// Whether `step`, of a layer computing in `layer_dtype`, needs an AutocastStep on tensors of
  /// these dtypes.
  static bool needed(const LayerStep& step, DType layer_dtype, const std::vector<DType>& input_dtypes,
                     bool casts_inputs);

  /// The converted copies live in the compiled step's scratch (they are needed during a call
  /// only), followed by the step's own scratch.
  size_t scratch_bytes() const override;
  void bind_scratch(std::byte* scratch) override;

  void forward(std::span<const Tensor> inputs, Tensor& output, bool training) override;
  void backward(std::span<const Tensor> inputs, const Tensor& output, Tensor& grad_output,
                std::span<Tensor* const> grad_inputs, std::span<Tensor> weight_gradients,
                bool grad_is_for_logits) override;
  std::span<const Tensor> batch_statistics() const override { return step_->batch_statistics(); }
  DType output_dtype() const override { return output_dtype_; }

 private:
  /// The step's view of a tensor: the tensor itself, or its converted copy in the scratch.
  struct Converted {
    bool converts = false;
    bool rounds = false;  // a float32 input rounded to bfloat16 precision, not converted
    bool converts_gradient = false;
    Tensor value, gradient;  // in the step's dtype, in the scratch (gradient: when converted)
  };
  /// Makes `converted.value` hold `tensor`, converting it when needed; returns what the step reads.
  static const Tensor& to_step(const Tensor& tensor, Converted& converted);

  std::unique_ptr<LayerStep> step_;
  DType output_dtype_;
  std::vector<Converted> inputs_;
  Converted output_;
  std::vector<Shape> input_shapes_;
  Shape output_shape_;
  size_t own_scratch_bytes_ = 0;  // the converted copies'
  // Views for a call: what the step reads and where it writes its input gradients.
  std::vector<Tensor> step_inputs_;
  std::vector<Tensor*> step_grad_inputs_;
};

}  // namespace tenfold
