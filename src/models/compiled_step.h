#pragma once
// A model's layers compiled for one fixed input shape, like an XLA program for one replica:
// every kernel created once, every activation and gradient placed in one arena planned by
// lifetime (graph/memory_plan.h), so running a step allocates nothing.
//
// Each layer runs as one LayerStep, except pairs that run faster fused (layers/fusion.h).
// Schedule (positions in the memory plan), for L steps:
//   forward of step i at i, the loss at L, backward of step i at 2L - i.
#include <memory>
#include <string>
#include <vector>

#include "graph/memory_plan.h"
#include "layers/layer.h"
#include "losses/loss.h"

namespace tenfold::models {

class CompiledStep {
 public:
  /// `layers` must be built. With `training`, backward buffers and weight gradients are
  /// planned too. `worker` and `replica` say who runs it (they seed Dropout's masks).
  CompiledStep(const std::vector<Layer*>& layers, const Shape& input_shape, bool training,
               int worker = 0, int replica = 0);

  int64_t batch_size() const { return input_.shape()[0]; }
  /// Fill with a batch before forward().
  Tensor& input() { return input_; }
  /// The model's output after forward().
  const Tensor& output() const { return activations_.back(); }
  void forward(bool training);
  /// After forward(): the loss summed over this batch (from the logits when the model ends in
  /// softmax and the loss can take them); with `gradient`, also d(sum / mean_over)/d output.
  double compute_loss(const losses::Loss& loss, const Tensor& y_true, double mean_over,
                      Tensor* gradient) const;
  /// After forward(true): the loss summed over this batch; gradients of (that sum / mean_over)
  /// land in weight_gradients().
  double backward(const losses::Loss& loss, const Tensor& y_true, double mean_over);
  /// One per weight of the layers, in order, in the weights' native layouts.
  std::vector<Tensor>& weight_gradients() { return weight_gradients_; }
  /// All of them as one flat array (with zero padding between them).
  Tensor& weight_gradient_buffer() { return weight_gradient_buffer_; }
  /// What each step runs: a layer's name, or the names of fused layers joined by '+'.
  const std::vector<std::string>& step_names() const { return step_names_; }
  /// Index of the first step with weights: backward stops there, and skips that step's input
  /// gradient.
  size_t first_backward_step() const { return first_backward_step_; }
  /// Bytes of the activation and gradient arena, and what it would be without reuse.
  size_t arena_bytes() const { return plan_.total_bytes(); }
  size_t unshared_bytes() const { return plan_.unshared_bytes(); }

 private:
  std::vector<std::unique_ptr<LayerStep>> steps_;
  std::vector<std::string> step_names_;
  // Backward runs from the last step down to this one, the first with weights: the steps
  // before it have nothing to learn and need no gradient.
  size_t first_backward_step_ = 0;
  std::vector<size_t> weight_gradients_begin_, weight_gradients_count_;  // per step
  MemoryPlan plan_;
  std::shared_ptr<std::byte> arena_;
  Tensor input_;
  std::vector<Tensor> activations_;  // activations_[i + 1] is step i's output; [0] the input
  std::vector<Tensor> gradients_;    // gradients_[i] is the gradient of activations_[i]
  Tensor weight_gradient_buffer_;
  std::vector<Tensor> weight_gradients_;  // views into weight_gradient_buffer_
};

}  // namespace tenfold::models
