// The training loop of every Model: fit, evaluate, predict (Keras' Trainer). Arrays are fed
// through the same path as Datasets: from_tensor_slices, shuffle, batch.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "core/error.h"
#include "layers/regularizers.h"
#include "models/progress_bar.h"
#include "models/model.h"

namespace tenfold::models {

namespace {

// fit warns once when the step waits for input longer than this share of an epoch, and longer
// than a few hundredths of a second: the waits of a tiny epoch are noise, not a bottleneck.
constexpr double input_bound_share = 0.10;
constexpr double input_bound_min_seconds = 0.05;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void copy_into(const Tensor& source, Tensor& destination) {
  std::memcpy(destination.raw_data(), source.raw_data(), source.num_bytes());
}

void check_inputs(const Model& model, const Inputs& x, const Targets* y) {
  const graph::Graph& graph = model.graph();
  check_argument(x.size() == graph.inputs().size(),
                 "model '" + model.name() + "' has " + std::to_string(graph.inputs().size()) +
                     " input(s), got " + std::to_string(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const Shape& expected = graph.sample_shape(graph.inputs()[i]);
    const std::string which = x.size() > 1 ? " '" + graph.input_names()[i] + "'" : "";
    check_argument(x[i].dtype() == DType::float32,
                   "input" + which + " must be float32, got " + dtype_name(x[i].dtype()) +
                       "; scale images to [0, 1] floats first, as the recipe does");
    check_argument(x[i].shape().rank() >= 1 && x[i].shape().without_batch() == expected,
                   "model '" + model.name() + "' expects input" + which + " " +
                       expected.with_leading(0).to_string(true) + ", got " + x[i].shape().to_string());
    check_argument(x[i].shape()[0] == x[0].shape()[0],
                   "the inputs disagree: " + std::to_string(x[0].shape()[0]) + " and " +
                       std::to_string(x[i].shape()[0]) + " samples");
  }
  check_argument(x[0].shape()[0] > 0, "the input has no samples");
  if (!y) return;
  check_argument(y->size() == model.num_outputs(),
                 "model '" + model.name() + "' has " + std::to_string(model.num_outputs()) +
                     " output(s), got targets for " + std::to_string(y->size()));
  for (const Tensor& target : *y) {
    check_argument(target.shape().rank() >= 1 && target.shape()[0] == x[0].shape()[0],
                   "inputs and labels disagree: " + std::to_string(x[0].shape()[0]) +
                       " samples but " + std::to_string(target.shape().rank() ? target.shape()[0] : 0) +
                       " labels");
  }
}

/// One batch of a dataset: inputs, targets and, when the elements carry them, sample weights
/// (empty otherwise).
struct Batch {
  Inputs x;
  Targets y;
  Tensor sample_weights;
};

/// A dataset batch as (inputs..., targets...[, sample weights]), checked against the model.
Batch features_and_labels(const Model& model, const data::Element& batch) {
  const size_t inputs = model.num_inputs(), outputs = model.num_outputs();
  check_argument(batch.size() == inputs + outputs || batch.size() == inputs + outputs + 1,
                 "fit and evaluate need dataset elements (" +
                     std::string(inputs == 1 ? "features" : std::to_string(inputs) + " inputs") + ", " +
                     std::string(outputs == 1 ? "labels" : std::to_string(outputs) + " targets") +
                     "[, sample weights]), got " + std::to_string(batch.size()) + " component(s)");
  Batch result{Inputs(batch.begin(), batch.begin() + long(inputs)),
               Targets(batch.begin() + long(inputs), batch.begin() + long(inputs + outputs)), Tensor()};
  check_inputs(model, result.x, &result.y);
  if (batch.size() == inputs + outputs + 1) {
    result.sample_weights = batch.back();
    check_argument(result.sample_weights.dtype() == DType::float32 &&
                       result.sample_weights.num_elements() == result.x[0].shape()[0],
                   "sample weights must be float32, one per sample: a batch of " +
                       std::to_string(result.x[0].shape()[0]) + " samples has weights of shape " +
                       result.sample_weights.shape().to_string());
  }
  return result;
}

/// Keras' class_weight: each sample weighted by its class's weight (1 for classes not named);
/// the class is the label, or the largest entry of a one-hot label.
Tensor class_sample_weights(const std::map<int, double>& class_weight, const Tensor& labels) {
  const int64_t rows = labels.shape()[0];
  Tensor weights(Shape({rows}));
  for (int64_t r = 0; r < rows; ++r) {
    auto found = class_weight.find(int(losses::class_of_label(labels, r)));
    weights.data<float>()[r] = found == class_weight.end() ? 1.0f : float(found->second);
  }
  return weights;
}

/// The dataset of (inputs..., targets...[, sample weights]) samples.
data::Dataset samples(const Inputs& x, const Targets& y, const std::optional<Tensor>& sample_weight = std::nullopt) {
  std::vector<Tensor> components = x;
  components.insert(components.end(), y.begin(), y.end());
  if (sample_weight) components.push_back(*sample_weight);
  return data::Dataset::from_tensor_slices(components);
}

data::Dataset batched(const Inputs& x, const Targets& y, int64_t batch_size) {
  check_argument(batch_size > 0, "batch_size must be positive, got " + std::to_string(batch_size));
  return samples(x, y).batch(batch_size);
}

}  // namespace

std::vector<metrics::Metric*> Model::Results::all() {
  std::vector<metrics::Metric*> trackers = {&loss};
  for (auto& output_loss : output_losses) trackers.push_back(&output_loss);
  for (auto& metric : metrics) trackers.push_back(metric.get());
  return trackers;
}

Logs Model::Results::logs() {
  Logs logs;
  for (const metrics::Metric* tracker : all()) logs.push_back({tracker->name(), tracker->result()});
  return logs;
}

void Model::Results::reset() {
  for (metrics::Metric* tracker : all()) tracker->reset_state();
}

void Model::make_metrics(Results& results, const Targets& y) const {
  // Several outputs: Keras prefixes each output's loss and metrics with its name.
  const bool several = outputs_.size() > 1;
  const std::vector<std::string> names = output_names();
  for (size_t k = 0; k < outputs_.size(); ++k) {
    if (several) results.output_losses.emplace_back(names[k] + "_loss");
    for (const nlohmann::json& metric : outputs_[k].metrics) {
      const std::string name = metrics::name_of(metric);
      results.metrics.push_back(metrics::get(metric, y[k].shape(), output_shape(y[k].shape()[0], k),
                                             several ? names[k] + "_" + name : name));
      results.metric_outputs.push_back(k);
    }
  }
  results.made = true;
}

void Model::validate_targets(const Targets& y) const {
  for (size_t k = 0; k < outputs_.size(); ++k) outputs_[k].loss->validate_targets(y[k], output_shape(1, k));
}

void Model::require_compiled(const std::string& action) const {
  check_argument(optimizer_ != nullptr, "model '" + name_ + "' must be compiled before " + action +
                                            ": call compile(optimizer, loss, metrics)");
}

namespace {

/// Rows [begin, end) of part `part` when `count` rows are split into `parts` parts as evenly as
/// they go (the first count % parts parts get one more).
std::pair<int64_t, int64_t> split_rows(int64_t count, int64_t parts, int64_t part) {
  int64_t base = count / parts, extra = count % parts;
  int64_t begin = part * base + std::min(part, extra);
  return {begin, begin + base + (part < extra ? 1 : 0)};
}

/// Whether the gradient reducer starts on buckets as backward finishes them (the default), or
/// only after backward (TENFOLD_OVERLAP_REDUCTION=0: to measure what the overlap saves).
bool overlap_reduction() {
  static const bool overlap = [] {
    const char* value = std::getenv("TENFOLD_OVERLAP_REDUCTION");
    return value == nullptr || std::string(value) != "0";
  }();
  return overlap;
}

/// A checksum of a batch's labels: every worker must be running the same global batch.
double batch_fingerprint(const Tensor& y) {
  uint32_t hash = 2166136261u;  // FNV-1a
  const auto* bytes = static_cast<const uint8_t*>(y.raw_data());
  for (size_t i = 0; i < y.num_bytes(); ++i) hash = (hash ^ bytes[i]) * 16777619u;
  return double(hash & 0xfffff);  // 20 bits: sums of squares stay exact in doubles
}

}  // namespace

void Model::run_batch(const Inputs& x, const Targets& y, const Tensor& sample_weights, bool training,
                      Results& results) {
  const int64_t global = x[0].shape()[0];
  for (size_t i = 0; i < layers_.size() && training; ++i) {
    check_argument(layers_[i]->trainable() == trainable_at_compile_[i],
                   "layer '" + layers_[i]->name() + "' was made " +
                       (layers_[i]->trainable() ? "trainable" : "non-trainable") +
                       " after compile: compile the model again for it to take effect (as Keras requires)");
  }
  validate_targets(y);
  if (!results.made) make_metrics(results, y);
  distribute::Strategy& strategy = *strategy_;
  const int local = strategy.num_local_replicas();
  // Training splits the global batch over every replica of every worker; evaluation splits it
  // over this worker's replicas only (each worker evaluates all of it: no collectives).
  const bool across_workers = training && strategy.num_workers() > 1;
  const int64_t parts = across_workers ? int64_t(local) * strategy.num_workers() : local;
  const int64_t first_part = across_workers ? int64_t(strategy.communicator().rank()) * local : 0;

  std::vector<std::pair<int64_t, int64_t>> rows(static_cast<size_t>(local));
  std::vector<CompiledStep*> steps(static_cast<size_t>(local));
  std::vector<std::vector<double>> loss_sums(static_cast<size_t>(local));  // per replica, output
  std::vector<double> activity_sums(static_cast<size_t>(local), 0.0);     // per replica
  // An update the optimizer would refuse (bfloat16 variables) is refused before the step
  // changes anything, moving statistics included.
  if (training) optimizer_->check_can_update();
  distribute::GradientReducer* reducer = training ? &gradient_reducer() : nullptr;
  if (reducer) reducer->start_step();
  // Layers that sum over the replicas while the step runs (synchronized BatchNormalization):
  // replicas without rows run nothing and stay out of those sums; across workers the sums are
  // collectives too, which every worker must reach, and which must not run beside the
  // gradient reducer's (the overlap waits until backward is done).
  const bool synchronized = training && synchronizes_replicas();
  if (synchronized) {
    check_argument(!across_workers || global >= parts,
                   "a global batch of " + std::to_string(global) + " rows cannot give each of the " +
                       std::to_string(parts) + " replicas a row, which synchronized "
                       "BatchNormalization needs across workers: use batches of at least " +
                       std::to_string(parts) + " rows (e.g. drop the last, smaller batch)");
    std::vector<bool> active;
    for (int replica = 0; replica < local; ++replica) {
      auto [begin, end] = split_rows(global, parts, first_part + replica);
      active.push_back(begin < end);
    }
    cross_replica_->set_active(active);
  }
  const bool overlap = overlap_reduction() && !(synchronized && across_workers);
  strategy.run_on_replicas([&](int replica) {
    auto [begin, end] = rows[size_t(replica)] = split_rows(global, parts, first_part + replica);
    if (begin == end) {
      // No rows for this replica (a batch smaller than the replicas): it adds zero gradients.
      CompiledStep& idle = replica_step(replica, 1, training);
      steps[size_t(replica)] = &idle;
      if (!reducer) return;
      std::memset(idle.weight_gradient_buffer().raw_data(), 0, idle.weight_gradient_buffer().num_bytes());
      reducer->begin(replica, idle.weight_gradient_buffer());
      reducer->ready(replica, 0);
      return;
    }
    CompiledStep& step = replica_step(replica, end - begin, training);
    steps[size_t(replica)] = &step;
    for (size_t i = 0; i < x.size(); ++i) copy_into(x[i].slice_batch(begin, end), step.input(i));
    step.forward(training);
    activity_sums[size_t(replica)] = step.activity_penalty();
    // The loss of each replica is scaled by 1 / global batch: the sum over replicas and
    // workers is then the gradient of the global batch's mean loss.
    Targets y_rows;
    std::vector<OutputLoss> terms;
    const Tensor weight_rows = sample_weights.empty() ? Tensor() : sample_weights.slice_batch(begin, end);
    for (size_t k = 0; k < outputs_.size(); ++k) y_rows.push_back(y[k].slice_batch(begin, end));
    for (size_t k = 0; k < outputs_.size(); ++k) {
      terms.push_back({outputs_[k].loss.get(), &y_rows[k], outputs_[k].weight, weight_rows.empty() ? nullptr : &weight_rows});
    }
    std::vector<double>& sums = loss_sums[size_t(replica)];
    if (training) {
      // The reducer sums and all-reduces each bucket of gradients as backward finishes it.
      reducer->begin(replica, step.weight_gradient_buffer());
      std::function<void(int64_t)> on_final;
      if (overlap) on_final = [&](int64_t offset) { reducer->ready(replica, offset); };
      sums = step.backward(terms, double(global), on_final);
      reducer->ready(replica, 0);
    } else {
      for (size_t k = 0; k < terms.size(); ++k) {
        sums.push_back(step.compute_loss(*terms[k].loss, y_rows[k], double(global), nullptr, k, terms[k].sample_weights));
      }
    }
  });

  // Keras adds the weights' regularization penalties to the loss, evaluated at the weights
  // this forward used; their gradient joins the reduced one, once per global batch.
  const double penalty = regularization_penalty(optimized_weights_);
  if (training) {
    reduction_wait_seconds_ += reducer->finish();
    // After finish(): across workers the statistics are a collective of their own, which must
    // not run beside the reducer's.
    update_layer_states(*steps[0], across_workers);
    add_regularization_gradients(optimized_weights_, steps[0]->weight_gradients());
    if (local == 1) {
      optimizer_->apply_gradients(steps[0]->weight_gradients());
    } else {
      // The update too runs on the replicas' cores, each on a slice of every variable.
      optimizer_->apply_gradients(steps[0]->weight_gradients(), [&](const auto& task) {
        strategy.run_on_replicas([&](int replica) { task(replica, local); });
      });
    }
    for (Variable* weight : optimized_weights_) {
      if (!weight->constraint()) continue;
      weight->constraint()->apply(*weight);
      weight->round_to_dtype();
    }
  }

  std::vector<std::vector<double>> before;
  for (const metrics::Metric* tracker : results.all()) before.push_back(tracker->state());
  for (int replica = 0; replica < local; ++replica) {
    auto [begin, end] = rows[size_t(replica)];
    if (begin == end) continue;
    const double count = double(end - begin);
    double total = 0;
    for (size_t k = 0; k < outputs_.size(); ++k) {
      const double sum = loss_sums[size_t(replica)][k];
      total += outputs_[k].weight * sum;
      if (!results.output_losses.empty()) results.output_losses[k].add(sum, count);
    }
    // The penalties: the weights' once per sample, the activities' (their sums over this
    // replica's rows) over the global batch, as Keras divides them by the batch size.
    results.loss.add(total + penalty * count + activity_sums[size_t(replica)], count);
    for (size_t i = 0; i < results.metrics.size(); ++i) {
      const size_t k = results.metric_outputs[i];
      results.metrics[i]->update_state(y[k].slice_batch(begin, end), steps[size_t(replica)]->output(k));
    }
  }
  if (across_workers) add_global_results(y, results, before);
}

void Model::update_layer_states(const CompiledStep& first_replica, bool across_workers) {
  const std::vector<CompiledStep::LayerStatistics> layers = first_replica.layer_statistics();
  if (layers.empty()) return;
  // Only the first worker's values count: the all-reduce of them and zeros is a broadcast.
  const bool source = !across_workers || strategy_->communicator().rank() == 0;
  std::vector<float> values;
  for (const CompiledStep::LayerStatistics& layer : layers) {
    for (const Tensor& statistic : layer.statistics) {
      for (float value : statistic.values<float>()) values.push_back(source ? value : 0.0f);
    }
  }
  if (across_workers) strategy_->communicator().allreduce_sum(values.data(), int64_t(values.size()));
  size_t at = 0;
  for (const CompiledStep::LayerStatistics& layer : layers) {
    std::vector<Tensor> statistics;
    for (const Tensor& statistic : layer.statistics) {
      statistics.push_back(Tensor(statistic.shape()));
      for (float& value : statistics.back().values<float>()) value = values[at++];
    }
    layer.layer->update_state(statistics);
    // A bfloat16 policy's moving statistics are bfloat16 variables.
    for (Variable* weight : layer.layer->weights()) weight->round_to_dtype();
  }
}

distribute::GradientReducer& Model::gradient_reducer() {
  // Buckets of 1 MiB: small enough that the last layers' gradients are on the wire while
  // backward runs through the first ones, large enough that a bucket is one efficient collective.
  constexpr int64_t bucket_elements = int64_t(1) << 18;
  if (!reducer_) {
    reducer_ = std::make_unique<distribute::GradientReducer>(
        strategy_->communicator(), strategy_->num_local_replicas(),
        gradient_buffer_elements(trainable_weights()), bucket_elements);
  }
  return *reducer_;
}

void Model::add_global_results(const Targets& y, Results& results,
                               const std::vector<std::vector<double>>& before) {
  // One small all-reduce: the batch's fingerprint and its square (all workers ran the same
  // batch iff W * sum(f^2) == sum(f)^2), then each tracker's increments of its sums.
  double fingerprint = batch_fingerprint(y[0]);
  std::vector<double> sums = {fingerprint, fingerprint * fingerprint};
  std::vector<metrics::Metric*> trackers = results.all();
  for (size_t i = 0; i < trackers.size(); ++i) {
    for (size_t k = 0; k < before[i].size(); ++k) sums.push_back(trackers[i]->state()[k] - before[i][k]);
  }
  distribute::Communicator& communicator = strategy_->communicator();
  communicator.allreduce_sum(sums.data(), int64_t(sums.size()));
  if (double(communicator.size()) * sums[1] != sums[0] * sums[0]) {
    throw Error(ErrorCode::invalid_argument,
                "the workers trained on different batches in the same step: every worker must "
                "read the same global batches in the same order. Give the dataset's shuffle the "
                "same seed on every worker (shuffle(buffer_size, seed)); each worker then takes "
                "its own slice of each global batch");
  }
  size_t at = 2;
  for (size_t i = 0; i < trackers.size(); ++i) {
    std::vector<double> state = before[i];
    for (double& value : state) value += sums[at++];
    trackers[i]->set_state(std::move(state));
  }
}

void Model::warn_if_outside_scope() {
  if (warned_outside_scope_ || strategy_->num_replicas_in_sync() > 1) return;
  auto live = distribute::live_multi_replica_strategy();
  if (!live) return;
  warned_outside_scope_ = true;
  std::fprintf(stderr,
               "WARNING: model '%s' was built outside strategy.scope(): training on 1 of %d "
               "devices; build and compile it inside the scope (auto scope = "
               "strategy->scope();) to train on all of them.\n",
               name_.c_str(), live->num_replicas_in_sync());
}

std::map<std::string, double> Model::train_on_batch(const Tensor& x, const Tensor& y) {
  return train_on_batch(Inputs{x}, Targets{y});
}

std::map<std::string, double> Model::train_on_batch(const Inputs& x, const Targets& y) {
  require_compiled("train_on_batch");
  check_inputs(*this, x, &y);
  Results results;
  run_batch(x, y, Tensor(), true, results);
  Logs logs = results.logs();
  return std::map<std::string, double>(logs.begin(), logs.end());
}

History Model::fit(const Tensor& x, const Tensor& y, const FitOptions& options) {
  return fit(Inputs{x}, Targets{y}, options);
}

History Model::fit(const Inputs& x, const Targets& y, const FitOptions& options) {
  require_compiled("fit");
  check_inputs(*this, x, &y);
  validate_targets(y);
  // As Keras with arrays: the whole set reshuffled every epoch.
  if (options.sample_weight) {
    check_argument(options.sample_weight->dtype() == DType::float32 &&
                       options.sample_weight->num_elements() == x[0].shape()[0],
                   "sample_weight must be float32, one per sample: " + std::to_string(x[0].shape()[0]) +
                       " samples, sample_weight of shape " + options.sample_weight->shape().to_string());
  }
  data::Dataset dataset = samples(x, y, options.sample_weight);
  if (options.shuffle) dataset = dataset.shuffle(x[0].shape()[0], options.shuffle_seed);
  check_argument(options.batch_size > 0,
                 "batch_size must be positive, got " + std::to_string(options.batch_size));
  return fit(dataset.batch(options.batch_size), options);
}

History Model::fit(const data::Dataset& dataset, const FitOptions& options) {
  require_compiled("fit");
  check_argument(options.epochs >= 0, "epochs must be >= 0, got " + std::to_string(options.epochs));
  check_argument(dataset.cardinality() != data::INFINITE_CARDINALITY,
                 "the training dataset is infinite (repeat() without a count); pass a finite "
                 "one, e.g. with take(steps)");
  check_argument(options.class_weight.empty() || num_outputs() == 1,
                 "class_weight is for models with one output (as in Keras); weight the samples instead");
  std::optional<data::Dataset> validation = options.validation_dataset;
  if (!validation && options.validation_data) {
    validation = batched({options.validation_data->first}, {options.validation_data->second},
                         options.batch_size);
  }
  warn_if_outside_scope();
  // Worker 0 alone reports; the others train in step with it.
  const int verbose = strategy_->is_chief() ? options.verbose : 0;
  Results results;
  bool warned_input_bound = false;
  History history;

  stop_training_ = false;
  start_position_ = {options.initial_epoch, 0};
  for (auto& callback : options.callbacks) callback->set_model(this);
  for (auto& callback : options.callbacks) callback->on_train_begin();
  const TrainingPosition start = start_position_;
  Logs logs;
  for (int epoch = start.epoch; epoch < options.epochs && !stop_training_; ++epoch) {
    results.reset();
    for (auto& callback : options.callbacks) callback->on_epoch_begin(epoch);
    if (verbose > 0) std::printf("Epoch %d/%d\n", epoch + 1, options.epochs);
    ProgressBar bar(dataset.cardinality(), verbose);
    Clock::time_point epoch_start = Clock::now();
    double waiting = 0;
    int64_t steps = 0;
    auto iterator = dataset.iterate(uint64_t(epoch));
    // Resuming inside an epoch: the same pass, its first batches already applied.
    for (int64_t skip = epoch == start.epoch ? start.batch : 0; skip > 0 && iterator->next(); --skip) ++steps;
    const int64_t skipped = steps;
    while (!stop_training_) {
      Clock::time_point wait_start = Clock::now();
      std::optional<data::Element> batch = iterator->next();
      waiting += seconds_since(wait_start);
      if (!batch) break;
      auto [x, y, sample_weights] = features_and_labels(*this, *batch);
      if (!options.class_weight.empty()) {
        check_argument(sample_weights.empty(), "give class_weight or sample weights, not both (as Keras)");
        sample_weights = class_sample_weights(options.class_weight, y[0]);
      }
      for (auto& callback : options.callbacks) callback->on_train_batch_begin(steps);
      run_batch(x, y, sample_weights, true, results);
      Logs batch_logs = results.logs();
      for (auto& callback : options.callbacks) callback->on_train_batch_end(steps, batch_logs);
      bar.update(++steps, batch_logs);
    }
    if (skipped > 0 && steps == skipped) continue;  // resumed at the very end of this epoch
    check_argument(steps > 0, "the training dataset produced no batches in epoch " +
                                  std::to_string(epoch + 1) +
                                  ": it is empty (check its source, take, skip, filter, shard)");
    double elapsed = seconds_since(epoch_start);
    if (strategy_->is_chief() && !warned_input_bound && waiting > input_bound_share * elapsed &&
        waiting > input_bound_min_seconds) {
      std::fprintf(stderr,
                   "WARNING: training waited for input %.0f%% of epoch %d (%.2f s of %.2f s): "
                   "the input pipeline is the bottleneck. Add .prefetch(AUTOTUNE) at its end, "
                   "map(fn, AUTOTUNE) for parallel preprocessing, or .cache() after loading.\n",
                   100 * waiting / elapsed, epoch + 1, waiting, elapsed);
      warned_input_bound = true;
    }
    logs = results.logs();
    if (validation) {
      auto validated = evaluate(*validation, 0);
      for (const auto& [name, value] : results.logs()) {  // Keras' order
        logs.push_back({"val_" + name, validated.at(name)});
      }
    }
    bar.finish(logs, steps);
    history.epoch.push_back(epoch);
    for (const auto& [name, value] : logs) history.history[name].push_back(value);
    for (auto& callback : options.callbacks) callback->on_epoch_end(epoch, logs);
  }
  for (auto& callback : options.callbacks) callback->on_train_end(logs);
  return history;
}

std::map<std::string, double> Model::evaluate(const Tensor& x, const Tensor& y,
                                              int64_t batch_size, int verbose) {
  return evaluate(Inputs{x}, Targets{y}, batch_size, verbose);
}

std::map<std::string, double> Model::evaluate(const Inputs& x, const Targets& y,
                                              int64_t batch_size, int verbose) {
  require_compiled("evaluate");
  check_inputs(*this, x, &y);
  validate_targets(y);
  return evaluate(batched(x, y, batch_size), verbose);
}

std::map<std::string, double> Model::evaluate(const data::Dataset& dataset, int verbose) {
  require_compiled("evaluate");
  Results results;
  ProgressBar bar(dataset.cardinality(), verbose);
  int64_t steps = 0;
  auto iterator = dataset.iterate();
  while (auto batch = iterator->next()) {
    auto [x, y, sample_weights] = features_and_labels(*this, *batch);
    run_batch(x, y, sample_weights, false, results);
    bar.update(++steps, results.logs());
  }
  check_argument(steps > 0, "the evaluation dataset produced no batches: it is empty");
  Logs logs = results.logs();
  bar.finish(logs, steps);
  return std::map<std::string, double>(logs.begin(), logs.end());
}

Tensor Model::predict(const Tensor& x, int64_t batch_size) {
  check_argument(num_outputs() == 1, "model '" + name_ + "' has " + std::to_string(num_outputs()) +
                                         " outputs: predict(Inputs) gives them all");
  return predict(Inputs{x}, batch_size)[0];
}

std::vector<Tensor> Model::predict(const Inputs& x, int64_t batch_size) {
  check_inputs(*this, x, nullptr);
  check_argument(batch_size > 0, "batch_size must be positive, got " + std::to_string(batch_size));
  const int64_t count = x[0].shape()[0];
  std::vector<Tensor> predictions;
  for (size_t k = 0; k < num_outputs(); ++k) predictions.emplace_back(output_shape(count, k));
  for (int64_t begin = 0; begin < count; begin += batch_size) {
    int64_t end = std::min(begin + batch_size, count);
    CompiledStep& step = compiled_step(end - begin, false);
    for (size_t i = 0; i < x.size(); ++i) copy_into(x[i].slice_batch(begin, end), step.input(i));
    step.forward(false);
    for (size_t k = 0; k < predictions.size(); ++k) {
      Tensor rows = predictions[k].slice_batch(begin, end);
      copy_into(step.output(k), rows);
    }
  }
  return predictions;
}

}  // namespace tenfold::models
