#include "models/compiled_step.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "core/error.h"
#include "kernels/bfloat16.h"
#include "kernels/onednn/engine.h"
#include "layers/autocast_step.h"
#include "layers/fusion.h"

namespace tenfold::models {

namespace {

/// A fused pair runs node `n` and node `n + 1` as one step: `n`'s output is read by `n + 1`
/// alone and is not a model output.
bool may_fuse(const graph::Graph& graph, const std::vector<std::vector<int>>& consumers, size_t n) {
  const auto& nodes = graph.nodes();
  if (n + 1 >= nodes.size() || nodes[n + 1].inputs.size() != 1) return false;
  const int tensor = nodes[n].output;
  const auto& outputs = graph.outputs();
  return consumers[size_t(tensor)] == std::vector<int>{int(n) + 1} &&
         std::find(outputs.begin(), outputs.end(), tensor) == outputs.end();
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

CompiledStep::CompiledStep(const graph::Graph& graph, int64_t batch, bool training, int worker,
                           int replica, distribute::CrossReplicaSum* cross_replica)
    : batch_(batch), training_(training), input_ids_(graph.inputs()), output_ids_(graph.outputs()) {
  check_argument(!graph.nodes().empty(), "a model needs at least one layer before it can run");
  const size_t tensor_count = size_t(graph.num_tensors());
  std::vector<bool> is_output(tensor_count, false);
  for (int output : output_ids_) is_output[size_t(output)] = true;
  auto shape_of = [&](int tensor) { return graph.sample_shape(tensor).with_leading(batch); };
  const std::vector<std::vector<int>> node_consumers = graph.consumers();
  // Per tensor, its dtype: float32 for the model's inputs, the compute dtype of the layer
  // making it otherwise (a reshape keeps its input's), as Keras' layers return theirs.
  dtypes_.assign(tensor_count, DType::float32);

  // Steps: one per node, or per pair of nodes that runs faster fused. A tensor depends on the
  // weights when a step with weights lies on its way from the inputs: only those tensors need
  // gradients.
  std::vector<bool> depends(tensor_count, false);
  std::map<const Layer*, int> calls_of;  // calls compiled so far, per layer
  for (size_t n = 0; n < graph.nodes().size();) {
    const graph::Node& node = graph.nodes()[n];
    bool input_depends = false;
    for (int input : node.inputs) input_depends = input_depends || depends[size_t(input)];
    const DType compute = compute_dtype(node.layer->dtype_policy());
    CompileOptions options{.need_input_gradient = training && input_depends,
                           .need_weight_gradients = training && !node.layer->trainable_weights().empty(),
                           .compute_dtype = compute, .worker = worker, .replica = replica,
                           .call = calls_of[node.layer], .cross_replica = cross_replica};
    kernels::onednn::CompilingLayer naming(node.layer->name());
    std::vector<Shape> input_shapes;
    for (int input : node.inputs) input_shapes.push_back(shape_of(input));
    Step step;
    step.inputs = node.inputs;
    // A layer with an activity regularizer keeps its output: the penalty reads it. A fused
    // pair computes in one dtype.
    if (may_fuse(graph, node_consumers, n) && !node.layer->activity_regularizer() &&
        compute_dtype(graph.nodes()[n + 1].layer->dtype_policy()) == compute) {
      step.kernel = compile_fused(*node.layer, *graph.nodes()[n + 1].layer, input_shapes, options);
    }
    const size_t covered = step.kernel ? 2 : 1;
    if (!step.kernel) step.kernel = node.layer->compile_for(input_shapes, options);
    bool has_weights = false;  // trainable ones: a frozen layer learns nothing
    for (size_t k = n; k < n + covered; ++k) {
      step.layers.push_back(graph.nodes()[k].layer);
      ++calls_of[graph.nodes()[k].layer];
      has_weights = has_weights || !step.layers.back()->trainable_weights().empty();
    }
    step.output = graph.nodes()[n + covered - 1].output;
    const DType output_dtype = step.kernel->is_reshape() ? dtypes_[size_t(node.inputs[0])] : compute;
    dtypes_[size_t(step.output)] = output_dtype;
    check_argument(output_dtype == DType::float32 || !step.layers.back()->activity_regularizer(),
                   "layer '" + step.layers.back()->name() + "': an activity_regularizer under the " +
                       dtype_policy_name(step.layers.back()->dtype_policy()) +
                       " policy is not supported yet; give the layer dtype float32");
    std::vector<DType> input_dtypes;
    for (int input : node.inputs) input_dtypes.push_back(dtypes_[size_t(input)]);
    const bool casts_inputs = node.layer->casts_inputs();
    if (!step.kernel->is_reshape() && AutocastStep::needed(*step.kernel, output_dtype, input_dtypes, casts_inputs)) {
      auto autocast = std::make_unique<AutocastStep>(std::move(step.kernel), input_shapes, input_dtypes,
                                                     shape_of(step.output), output_dtype, casts_inputs,
                                                     options.need_input_gradient);
      step.kernel = std::move(autocast);
    }
    depends[size_t(step.output)] = input_depends || has_weights;
    step.runs_backward = training && depends[size_t(step.output)];
    steps_.push_back(std::move(step));
    n += covered;
  }
  const int count = int(steps_.size());
  if (training && worker == 0 && replica == 0 && std::getenv("TENFOLD_PROFILE")) {
    profile_ = std::make_unique<Profile>();
    profile_->forward_seconds.assign(steps_.size(), 0.0);
    profile_->backward_seconds.assign(steps_.size(), 0.0);
  }

  // Who reads each tensor, in step indices.
  std::vector<std::vector<int>> readers(tensor_count);
  for (int s = 0; s < count; ++s) {
    for (int input : steps_[size_t(s)].inputs) readers[size_t(input)].push_back(s);
  }
  std::vector<int> producer(tensor_count, -1);
  for (int s = 0; s < count; ++s) producer[size_t(steps_[size_t(s)].output)] = s;
  auto backward_at = [&](int s) { return 2 * count - s; };
  // Per output, the step whose softmax input a crossentropy may take instead of the output:
  // the step making it, when it ends in softmax and nothing else reads the output.
  for (int output : output_ids_) {
    const int maker = producer[size_t(output)];
    const bool logits = maker >= 0 && readers[size_t(output)].empty() &&
                        steps_[size_t(maker)].kernel->ends_in_softmax() && dtypes_[size_t(output)] == DType::float32;
    softmax_steps_.push_back(logits ? maker : -1);
  }

  auto bytes_of = [&](int tensor) { return size_t(shape_of(tensor).num_elements()) * dtype_size(dtypes_[size_t(tensor)]); };
  // Activations. A reshape's output is a view of its input when nothing else reads that input.
  std::vector<int> activation_id(tensor_count, -1);
  std::vector<int> view_of(tensor_count, -1);
  for (int s = 0; s < count; ++s) {
    const Step& step = steps_[size_t(s)];
    const size_t out = size_t(step.output);
    int last = s;
    for (int reader : readers[out]) {
      last = std::max(last, steps_[size_t(reader)].runs_backward ? backward_at(reader) : reader);
    }
    if (step.runs_backward) last = std::max(last, backward_at(s));
    if (is_output[out]) last = 2 * count + 1;  // read after the step: metrics, predict
    const bool view = step.kernel->is_reshape() && readers[size_t(step.inputs[0])].size() == 1;
    if (view) {
      view_of[out] = step.inputs[0];
      activation_id[out] = activation_id[size_t(step.inputs[0])];
      if (activation_id[out] >= 0) plan_.extend(activation_id[out], s, last);
    } else {
      activation_id[out] = plan_.add(bytes_of(int(out)), s, last);
    }
  }

  // Gradients. Writers of a tensor's gradient, in time order: the loss (for the model's
  // output), then the steps reading it, last step first.
  std::vector<int> gradient_id(tensor_count, -1);
  std::vector<std::vector<int>> scratch_ids(static_cast<size_t>(count));
  if (training) {
    // Last step first, so that a gradient may take the memory of the output gradient its
    // first writer passes on unchanged (a reshape, an Add) and needs no more after.
    for (int s = count - 1; s >= 0; --s) {
      const size_t out = size_t(steps_[size_t(s)].output);
      if (!depends[out]) continue;
      int first_write = is_output[out] ? count : 2 * count + 1, first_writer = -1;
      for (int reader : readers[out]) {
        if (steps_[size_t(reader)].runs_backward && backward_at(reader) < first_write) {
          first_write = backward_at(reader);
          first_writer = reader;
        }
      }
      const Step* writer = first_writer >= 0 ? &steps_[size_t(first_writer)] : nullptr;
      const int passed = writer ? writer->kernel->input_sharing_gradient() : -1;
      if (passed >= 0 && writer->inputs[size_t(passed)] == int(out) &&
          gradient_id[size_t(writer->output)] >= 0 && dtypes_[out] == dtypes_[size_t(writer->output)]) {
        gradient_id[out] = gradient_id[size_t(writer->output)];
        plan_.extend(gradient_id[out], first_write, backward_at(s));
      } else {
        gradient_id[out] = plan_.add(bytes_of(int(out)), first_write, backward_at(s));
      }
    }
    // Which writes accumulate: all but the first in time order.
    std::vector<bool> written(tensor_count, false);
    for (int output : output_ids_) written[size_t(output)] = gradient_id[size_t(output)] >= 0;
    for (int s = count - 1; s >= 0; --s) {
      Step& step = steps_[size_t(s)];
      step.accumulates.assign(step.inputs.size(), false);
      if (!step.runs_backward) continue;
      for (size_t k = 0; k < step.inputs.size(); ++k) {
        const size_t input = size_t(step.inputs[k]);
        if (gradient_id[input] < 0) continue;
        if (written[input]) {
          step.accumulates[k] = true;
          scratch_ids[size_t(s)].push_back(plan_.add(bytes_of(int(input)), backward_at(s), backward_at(s)));
        }
        written[input] = true;
      }
    }
  }
  plan_.finalize();
  arena_ = allocate_aligned(plan_.total_bytes());
  auto arena_view = [&](int id, int tensor) {
    return Tensor::view(arena_.get() + plan_.offset(id), shape_of(tensor), dtypes_[size_t(tensor)]);
  };
  for (const Step& step : steps_) scratch_bytes_ = std::max(scratch_bytes_, step.kernel->scratch_bytes());
  scratch_ = allocate_aligned(scratch_bytes_, false);
  for (Step& step : steps_) step.kernel->bind_scratch(scratch_.get());

  tensors_.resize(tensor_count);
  for (int input : input_ids_) tensors_[size_t(input)] = Tensor(shape_of(input));
  for (const Step& step : steps_) {
    const size_t out = size_t(step.output);
    tensors_[out] = activation_id[out] >= 0 ? arena_view(activation_id[out], int(out))
                                            : tensors_[size_t(view_of[out])].reshaped(shape_of(int(out)));
  }
  // The losses, metrics and predictions read float32 outputs, as Keras' losses cast theirs.
  for (int output : output_ids_) {
    const bool converts = dtypes_[size_t(output)] != DType::float32;
    float_outputs_.push_back(converts ? Tensor(shape_of(output)) : Tensor());
    float_output_gradients_.push_back(converts && training ? Tensor(shape_of(output)) : Tensor());
  }
  for (Step& step : steps_) {
    for (int input : step.inputs) step.input_tensors.push_back(tensors_[size_t(input)]);
  }
  if (!training) return;

  gradients_.resize(tensor_count);
  for (size_t t = 0; t < tensor_count; ++t) {
    if (gradient_id[t] >= 0) gradients_[t] = arena_view(gradient_id[t], int(t));
  }
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    size_t next_scratch = 0;
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      if (step.accumulates[k]) {
        step.scratch.push_back(arena_view(scratch_ids[s][next_scratch++], step.inputs[k]));
      }
    }
    next_scratch = 0;
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      Tensor& gradient = gradients_[size_t(step.inputs[k])];
      step.grad_targets.push_back(!step.runs_backward || gradient.empty() ? nullptr
                                  : step.accumulates[k]                  ? &step.scratch[next_scratch++]
                                                                         : &gradient);
    }
  }

  // The trainable weights' gradients in one buffer, each 64-byte aligned: replicas and workers
  // sum them as one flat array (one fused all-reduce). A frozen layer that still runs backward
  // (for its input's gradient) writes its weight gradients to scratch nobody reads; state
  // (moving statistics) has no gradient. A shared layer's gradient slot is its first call's,
  // whose backward runs last: the later calls write to scratch added into it then.
  std::vector<Variable*> trainable;
  std::set<const Layer*> listed;
  for (const Step& step : steps_) {
    for (Layer* layer : step.layers) {
      if (!listed.insert(layer).second) continue;
      for (Variable* weight : layer->trainable_weights()) trainable.push_back(weight);
    }
  }
  weight_gradient_buffer_ = Tensor(Shape{gradient_buffer_elements(trainable)});
  int64_t offset = 0;
  std::map<const Variable*, std::pair<size_t, size_t>> first_call;  // weight -> (step, its gradient)
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    step.weights_begin = step_weight_gradients_.size();
    step.buffer_offset = offset;
    for (Layer* layer : step.layers) {
      const std::vector<Variable*> learned = layer->trainable_weights();
      for (Variable* weight : layer->weights()) {
        const Shape& shape = weight->value().shape();
        if (std::find(learned.begin(), learned.end(), weight) == learned.end()) {
          const bool frozen = step.runs_backward && weight->trainable();
          step_weight_gradients_.push_back(frozen ? Tensor::uninitialized(shape) : Tensor());
          continue;
        }
        if (auto shared = first_call.find(weight); shared != first_call.end()) {
          const auto [first_step, into] = shared->second;
          steps_[first_step].shared_gradient_sums.push_back({step_weight_gradients_.size(), into});
          step_weight_gradients_.push_back(Tensor::uninitialized(shape));
          continue;
        }
        first_call[weight] = {s, step_weight_gradients_.size()};
        step_weight_gradients_.push_back(Tensor::view(weight_gradient_buffer_.data<float>() + offset, shape));
        weight_gradients_.push_back(step_weight_gradients_.back());
        offset += gradient_buffer_elements({weight});
      }
    }
    step.weights_count = step_weight_gradients_.size() - step.weights_begin;
  }
}

int64_t gradient_buffer_elements(const std::vector<Variable*>& weights) {
  constexpr int64_t alignment = 64 / sizeof(float);
  int64_t total = 0;
  for (Variable* weight : weights) {  // in the native layout, which may pad (blocked kernels)
    total += (weight->value().num_elements() + alignment - 1) / alignment * alignment;
  }
  return total;
}

std::vector<std::string> CompiledStep::step_names() const {
  std::vector<std::string> names;
  for (const Step& step : steps_) {
    std::string name;
    for (const Layer* layer : step.layers) name += (name.empty() ? "" : "+") + layer->name();
    names.push_back(name);
  }
  return names;
}

std::vector<CompiledStep::LayerStatistics> CompiledStep::layer_statistics() const {
  std::vector<LayerStatistics> result;
  for (const Step& step : steps_) {
    std::span<const Tensor> statistics = step.kernel->batch_statistics();
    if (!statistics.empty()) result.push_back({step.layers.front(), statistics});
  }
  return result;
}

size_t CompiledStep::first_backward_step() const {
  size_t s = 0;
  while (s < steps_.size() && !steps_[s].runs_backward) ++s;
  return s;
}

CompiledStep::~CompiledStep() {
  if (!profile_ || profile_->training_steps <= 0) return;
  const std::vector<std::string> names = step_names();
  const double per_step_ms = 1e3 / double(profile_->training_steps);
  double total = 0;
  for (size_t s = 0; s < steps_.size(); ++s) total += profile_->forward_seconds[s] + profile_->backward_seconds[s];
  std::fprintf(stderr, "TENFOLD_PROFILE: the training step of replica 0, mean ms over %lld steps (batch %lld)\n",
               static_cast<long long>(profile_->training_steps), static_cast<long long>(batch_));
  std::fprintf(stderr, "%10s %10s %7s  %s\n", "forward", "backward", "share", "step");
  for (size_t s = 0; s < steps_.size(); ++s) {
    const double seconds = profile_->forward_seconds[s] + profile_->backward_seconds[s];
    std::fprintf(stderr, "%10.3f %10.3f %6.1f%%  %s\n", profile_->forward_seconds[s] * per_step_ms,
                 profile_->backward_seconds[s] * per_step_ms, total > 0 ? 100 * seconds / total : 0.0,
                 names[s].c_str());
  }
  std::fprintf(stderr, "%21.3f %7s  the layers (not the loss, the optimizer or the gradient reduction)\n",
               total * per_step_ms, "100%");
}

void CompiledStep::forward(bool training) {
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    const Clock::time_point start = profile_ ? Clock::now() : Clock::time_point{};
    step.kernel->forward(step.input_tensors, tensors_[size_t(step.output)], training);
    if (profile_) profile_->forward_seconds[s] += seconds_since(start);
  }
  for (size_t k = 0; k < output_ids_.size(); ++k) {
    if (!float_outputs_[k].empty()) kernels::convert(tensors_[size_t(output_ids_[k])], float_outputs_[k]);
  }
}

const Tensor& CompiledStep::output(size_t index) const {
  return float_outputs_.at(index).empty() ? tensors_.at(size_t(output_ids_.at(index))) : float_outputs_[index];
}

double CompiledStep::compute_loss(const losses::Loss& loss, const Tensor& y_true, double mean_over,
                                  Tensor* gradient, size_t index, const Tensor* sample_weights) const {
  const int softmax_step = softmax_steps_.at(index);
  const bool from_logits = loss.fuses_softmax() && softmax_step >= 0;
  const Tensor prediction =
      from_logits ? steps_[size_t(softmax_step)].kernel->logits(steps_[size_t(softmax_step)].input_tensors[0])
                  : output(index);
  // Keras averages a loss over every position of an output [batch, ..., classes] (a sequence's
  // steps, an image's pixels), not only over its samples: each sample's loss is the mean over
  // its positions.
  const Shape& shape = output(index).shape();
  const double positions = shape.rank() > 2 ? double(shape.num_elements() / (shape[0] * shape[shape.rank() - 1])) : 1.0;
  if (!sample_weights) return loss.compute(prediction, y_true, from_logits, mean_over * positions, gradient) / positions;
  // Weighted: each sample's loss and gradient alone, scaled by its weight (losses need not
  // know about weights; the loss is a small part of a step).
  const int64_t rows = shape[0];
  check_argument(sample_weights->dtype() == DType::float32 && sample_weights->num_elements() == rows,
                 "sample weights must be one float per sample: " + std::to_string(rows) + " samples, weights of shape " +
                     sample_weights->shape().to_string());
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float weight = sample_weights->data<float>()[r];
    Tensor row_gradient;
    if (gradient) row_gradient = gradient->slice_batch(r, r + 1);
    total += weight * loss.compute(prediction.slice_batch(r, r + 1), y_true.slice_batch(r, r + 1), from_logits,
                                   mean_over * positions, gradient ? &row_gradient : nullptr);
    if (gradient) {
      for (float& value : row_gradient.values<float>()) value *= weight;
    }
  }
  return total / positions;
}

std::vector<double> CompiledStep::backward(std::span<const OutputLoss> losses, double mean_over,
                                           const std::function<void(int64_t)>& on_final) {
  check_argument(training_, "this step was compiled for inference, not training");
  check_argument(losses.size() == output_ids_.size(),
                 "the model has " + std::to_string(output_ids_.size()) + " outputs, got " +
                     std::to_string(losses.size()) + " losses");
  // A loss weighted w is a loss averaged over mean_over / w; weight 0 adds no gradient.
  std::vector<double> sums;
  std::vector<bool> for_logits(steps_.size(), false);  // steps whose gradient is for logits
  for (size_t k = 0; k < losses.size(); ++k) {
    Tensor& model_gradient = gradients_[size_t(output_ids_[k])];
    // The loss's gradient is float32; a bfloat16 output gets it rounded.
    Tensor& gradient = float_output_gradients_[k].empty() ? model_gradient : float_output_gradients_[k];
    const bool counts = losses[k].weight != 0 && !model_gradient.empty();
    if (!counts && !model_gradient.empty()) gradient.fill_zero();
    sums.push_back(compute_loss(*losses[k].loss, *losses[k].y_true, mean_over / losses[k].weight,
                                counts ? &gradient : nullptr, k, losses[k].sample_weights));
    if (&gradient != &model_gradient && !model_gradient.empty()) kernels::convert(gradient, model_gradient);
    if (losses[k].loss->fuses_softmax() && softmax_steps_[k] >= 0) for_logits[size_t(softmax_steps_[k])] = true;
  }
  for (size_t s = steps_.size(); s-- > 0;) {
    Step& step = steps_[s];
    if (!step.runs_backward) continue;
    if (const auto& activity = step.layers.back()->activity_regularizer()) {
      add_activity_gradient(*activity, step, for_logits[s], mean_over);
    }
    std::span<Tensor> weights(step_weight_gradients_.data() + step.weights_begin, step.weights_count);
    const Clock::time_point start = profile_ ? Clock::now() : Clock::time_point{};
    step.kernel->backward(step.input_tensors, tensors_[size_t(step.output)], gradients_[size_t(step.output)],
                          step.grad_targets, weights, for_logits[s]);
    if (profile_) profile_->backward_seconds[s] += seconds_since(start);
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      if (step.accumulates[k]) kernels::add_into(*step.grad_targets[k], gradients_[size_t(step.inputs[k])]);
    }
    for (const auto& [from, into] : step.shared_gradient_sums) {
      kernels::add_into(step_weight_gradients_[from], step_weight_gradients_[into]);
    }
    if (on_final && step.weights_count > 0) on_final(step.buffer_offset);
  }
  if (profile_ && ++profile_->training_steps == 0) {  // the first step pays for first touches
    std::fill(profile_->forward_seconds.begin(), profile_->forward_seconds.end(), 0.0);
    std::fill(profile_->backward_seconds.begin(), profile_->backward_seconds.end(), 0.0);
  }
  return sums;
}

void CompiledStep::add_activity_gradient(const Regularizer& activity, const Step& step, bool for_logits,
                                         double mean_over) {
  // Keras: the penalty of the output over the batch size, so over the global batch here.
  const Tensor& y = tensors_[size_t(step.output)];
  float* gradient = gradients_[size_t(step.output)].data<float>();
  if (!for_logits) {
    activity.add_gradient(y.values<float>(), gradient, 1.0 / mean_over);
    return;
  }
  // The loss wrote the gradient of the softmax's logits: the penalty's goes through the
  // softmax, dz = y (a - sum(a y)) per row, a the penalty's gradient in y.
  const int64_t columns = y.shape()[y.shape().rank() - 1], rows = y.num_elements() / columns;
  const double scale = 1.0 / mean_over;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = y.data<float>() + r * columns;
    float* g = gradient + r * columns;
    auto a = [&](int64_t c) { return scale * (activity.l1 * double((p[c] > 0) - (p[c] < 0)) + 2 * activity.l2 * p[c]); };
    double dot = 0;
    for (int64_t c = 0; c < columns; ++c) dot += a(c) * p[c];
    for (int64_t c = 0; c < columns; ++c) g[c] += float(p[c] * (a(c) - dot));
  }
}

double CompiledStep::activity_penalty() const {
  double total = 0;
  for (const Step& step : steps_) {
    if (const auto& activity = step.layers.back()->activity_regularizer()) {
      total += activity->penalty(tensors_[size_t(step.output)].values<float>());
    }
  }
  return total;
}

double CompiledStep::backward(const losses::Loss& loss, const Tensor& y_true, double mean_over) {
  const OutputLoss only{&loss, &y_true};
  return backward(std::span<const OutputLoss>(&only, 1), mean_over)[0];
}

}  // namespace tenfold::models
