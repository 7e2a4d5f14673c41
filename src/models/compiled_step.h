#pragma once
// A model's graph compiled for one fixed batch size, like an XLA program for one replica:
// every kernel created once, every activation and gradient placed in one arena planned by
// lifetime (graph/memory_plan.h), so running a step allocates nothing.
//
// Each node of the graph runs as one LayerStep, except pairs that run faster fused
// (layers/fusion.h). Steps run in the graph's topological order. Schedule (positions in the
// memory plan), for S steps: forward of step s at s, the loss at S, backward of step s at
// 2S - s. A tensor lives from its producer's forward to the last read by a consumer (or by its
// producer's backward); its gradient from its first write until its producer's backward. A
// tensor read by several steps gets their gradients summed: the first writer writes it, each
// later one writes a scratch buffer that is then added in.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/memory_plan.h"
#include "layers/layer.h"
#include "losses/loss.h"

namespace tenfold::models {

/// The loss of one model output, for backward: `loss` of the output against `y_true`, counted
/// `weight` times in the total (Keras' loss_weights).
struct OutputLoss {
  const losses::Loss* loss;
  const Tensor* y_true;
  double weight = 1;
  /// Keras' sample_weight: float32 [rows], each sample's loss scaled by it; null for none.
  const Tensor* sample_weights = nullptr;
};

/// Floats of the flat gradient buffer for `weights` in their native layouts, each gradient
/// 64-byte aligned.
int64_t gradient_buffer_elements(const std::vector<Variable*>& weights);

class CompiledStep {
 public:
  /// The graph's layers must be built. With `training`, backward
  /// buffers and weight gradients are planned too. `worker` and `replica` say who runs it
  /// (they seed Dropout's masks); `cross_replica` sums over the step's replicas (see
  /// CompileOptions).
  CompiledStep(const graph::Graph& graph, int64_t batch, bool training, int worker = 0,
               int replica = 0, distribute::CrossReplicaSum* cross_replica = nullptr);
  /// With TENFOLD_PROFILE set in the environment, the training step of worker 0's replica 0
  /// times each step's forward and backward, and prints their means (ms per training step,
  /// the first step left out) to stderr when it is destroyed.
  ~CompiledStep();
  CompiledStep(CompiledStep&&) = default;
  CompiledStep& operator=(CompiledStep&&) = default;

  int64_t batch_size() const { return batch_; }
  /// Fill the model's inputs (in the graph's order) with a batch before forward().
  Tensor& input(size_t index = 0) { return tensors_.at(size_t(input_ids_.at(index))); }
  size_t num_inputs() const { return input_ids_.size(); }
  /// The model's outputs (in the graph's order) after forward(), in float32 whatever the
  /// dtype the model computes them in.
  const Tensor& output(size_t index = 0) const;
  size_t num_outputs() const { return output_ids_.size(); }
  void forward(bool training);
  /// After forward(): output `index`'s loss summed over this batch (from the logits when the
  /// output is a softmax the loss can take them from); with `gradient`, also
  /// d(sum / mean_over)/d output. With `sample_weights` (float32 [rows]) each sample's loss
  /// is scaled by its weight, as Keras' sample_weight (still over mean_over samples).
  double compute_loss(const losses::Loss& loss, const Tensor& y_true, double mean_over,
                      Tensor* gradient, size_t index = 0, const Tensor* sample_weights = nullptr) const;
  /// After forward(true): each output's loss summed over this batch; gradients of
  /// sum over outputs of (weight x loss sum / mean_over) land in weight_gradients().
  /// `on_final(offset)`, if given, hears as backward goes that the gradient buffer is final
  /// from `offset` to its end (a gradient reducer starts on it).
  std::vector<double> backward(std::span<const OutputLoss> losses, double mean_over,
                               const std::function<void(int64_t offset)>& on_final = {});
  /// The same for a model with one output.
  double backward(const losses::Loss& loss, const Tensor& y_true, double mean_over);
  /// The sum of the activity regularizers' penalties on this step's outputs (after forward),
  /// not yet divided by the batch: Keras adds it, over the batch size, to the loss.
  double activity_penalty() const;
  /// One per trainable weight, in the order of each layer's first call (Model's
  /// trainable_weights()), in the weights' native layouts; a shared layer's sums its calls'.
  std::vector<Tensor>& weight_gradients() { return weight_gradients_; }
  /// All of them as one flat array (with zero padding between them).
  Tensor& weight_gradient_buffer() { return weight_gradient_buffer_; }
  /// A layer whose state a training step updates, with this replica's batch statistics.
  struct LayerStatistics {
    Layer* layer;
    std::span<const Tensor> statistics;
  };
  /// After forward(true): those layers, in step order (Model::update_layer_states).
  std::vector<LayerStatistics> layer_statistics() const;
  /// What each step runs: a layer's name, or the names of fused layers joined by '+'.
  std::vector<std::string> step_names() const;
  /// Index of the first step that runs backward: the steps before it have no weights and no
  /// weighted step before them, so they need no gradient.
  size_t first_backward_step() const;
  /// Bytes of the activation and gradient arena, and what it would be without reuse.
  size_t arena_bytes() const { return plan_.total_bytes(); }
  /// Bytes of the scratch the steps share (LayerStep::scratch_bytes: the float32 copies of a
  /// mixed model's layers that compute in float32, Winograd convolutions' blocked copies),
  /// besides the arena.
  size_t scratch_bytes() const { return scratch_bytes_; }
  size_t unshared_bytes() const { return plan_.unshared_bytes(); }

 private:
  struct Step {
    std::unique_ptr<LayerStep> kernel;
    std::vector<Layer*> layers;  // two when fused
    std::vector<int> inputs;     // tensor ids
    std::vector<Tensor> input_tensors;
    int output;
    bool runs_backward = false;
    // Per input: where backward writes its gradient (null: none needed), and whether that is
    // a scratch buffer to add into the input's gradient afterwards.
    std::vector<Tensor*> grad_targets;
    std::vector<bool> accumulates;
    std::vector<Tensor> scratch;  // the scratch buffers, one per accumulating input
    size_t weights_begin = 0, weights_count = 0;
    int64_t buffer_offset = 0;  // where its trainable weights' gradients start in the buffer
    // A shared layer's first call: after its backward, the later calls' weight gradients
    // (step_weight_gradients_ indices: from, into) are added to its own.
    std::vector<std::pair<size_t, size_t>> shared_gradient_sums;
  };

  /// Adds the gradient of a step's activity penalty to its output's gradient (through the
  /// softmax when that gradient is for the logits).
  void add_activity_gradient(const Regularizer& activity, const Step& step, bool for_logits, double mean_over);

  int64_t batch_;
  bool training_;
  std::vector<Step> steps_;
  std::vector<int> input_ids_;
  std::vector<int> output_ids_;
  std::vector<int> softmax_steps_;  // per output: the step whose logits a loss may take, or -1
  MemoryPlan plan_;
  std::shared_ptr<std::byte> arena_;
  std::vector<DType> dtypes_;      // per tensor id
  std::vector<Tensor> tensors_;    // per tensor id: activations (model inputs own theirs)
  // Per model output computed in bfloat16: its float32 copy and the loss's gradient of it.
  std::vector<Tensor> float_outputs_, float_output_gradients_;
  std::shared_ptr<std::byte> scratch_;  // shared by the steps
  size_t scratch_bytes_ = 0;
  std::vector<Tensor> gradients_;  // per tensor id; empty where no gradient is needed
  Tensor weight_gradient_buffer_;
  std::vector<Tensor> weight_gradients_;       // the trainable ones: views into the buffer
  std::vector<Tensor> step_weight_gradients_;  // every weight's, contiguous per step
  struct Profile {
    std::vector<double> forward_seconds, backward_seconds;  // per step
    int64_t training_steps = -1;                             // timed: all but the first
  };
  std::unique_ptr<Profile> profile_;  // null unless profiling
};

}  // namespace tenfold::models
