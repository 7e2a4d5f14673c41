// The training loop of Sequential: fit, evaluate, predict (Keras' Trainer). Arrays are fed
// through the same path as Datasets: from_tensor_slices, shuffle, batch.
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "models/progress_bar.h"
#include "models/sequential.h"

namespace tenfold::models {

namespace {

// fit warns once when the step waits for input longer than this share of an epoch.
constexpr double input_bound_share = 0.10;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void copy_into(const Tensor& source, Tensor& destination) {
  std::memcpy(destination.raw_data(), source.raw_data(), source.num_bytes());
}

void check_inputs(const Sequential& model, const Tensor& x, const Tensor* y) {
  check_argument(x.dtype() == DType::float32,
                 std::string("inputs must be float32, got ") + dtype_name(x.dtype()) +
                     "; scale images to [0, 1] floats first, as the recipe does");
  check_argument(x.shape().rank() >= 1 && x.shape().without_batch() == model.input_shape(),
                 "model '" + model.name() + "' expects inputs " +
                     model.input_shape().with_leading(0).to_string(true) + ", got " +
                     x.shape().to_string());
  check_argument(x.shape()[0] > 0, "the input has no samples");
  if (y) {
    check_argument(y->shape().rank() >= 1 && y->shape()[0] == x.shape()[0],
                   "inputs and labels disagree: " + std::to_string(x.shape()[0]) +
                       " samples but " +
                       std::to_string(y->shape().rank() ? y->shape()[0] : 0) + " labels");
  }
}

/// A dataset batch as (features, labels), checked against the model.
std::pair<const Tensor&, const Tensor&> features_and_labels(const Sequential& model,
                                                            const data::Element& batch) {
  check_argument(batch.size() >= 2, "fit and evaluate need dataset elements (features, labels), "
                                    "got " + std::to_string(batch.size()) + " component(s)");
  check_inputs(model, batch[0], &batch[1]);
  return {batch[0], batch[1]};
}

Logs collect_logs(const metrics::Metric& loss,
                  const std::vector<std::unique_ptr<metrics::Metric>>& metrics) {
  Logs logs = {{"loss", loss.result()}};
  for (const auto& metric : metrics) logs.push_back({metric->name(), metric->result()});
  return logs;
}

data::Dataset batched(const Tensor& x, const Tensor& y, int64_t batch_size) {
  check_argument(batch_size > 0, "batch_size must be positive, got " + std::to_string(batch_size));
  return data::Dataset::from_tensor_slices({x, y}).batch(batch_size);
}

}  // namespace

std::vector<std::unique_ptr<metrics::Metric>> Sequential::make_metrics(const Tensor& y) const {
  std::vector<std::unique_ptr<metrics::Metric>> result;
  for (const auto& name : metric_names_) {
    result.push_back(metrics::get(name, y.shape(), output_shape(y.shape()[0])));
  }
  return result;
}

void Sequential::require_compiled(const std::string& action) const {
  check_argument(optimizer_ != nullptr, "model '" + name_ + "' must be compiled before " + action +
                                            ": call compile(optimizer, loss, metrics)");
}

void Sequential::run_batch(const Tensor& x, const Tensor& y, bool training,
                           metrics::Metric& loss_tracker,
                           std::vector<std::unique_ptr<metrics::Metric>>& metrics) {
  const int64_t count = x.shape()[0];
  loss_->validate_targets(y, output_shape(1));
  if (metrics.empty()) metrics = make_metrics(y);
  CompiledStep& step = compiled_step(count, training);
  copy_into(x, step.input());
  step.forward(training);
  double loss_sum = 0;
  if (training) {
    loss_sum = step.backward(*loss_, y, double(count));
    optimizer_->apply_gradients(step.weight_gradients());
  } else {
    loss_sum = step.compute_loss(*loss_, y, double(count), nullptr);
  }
  loss_tracker.add(loss_sum, double(count));
  for (auto& metric : metrics) metric->update_state(y, step.output());
}

std::map<std::string, double> Sequential::train_on_batch(const Tensor& x, const Tensor& y) {
  require_compiled("train_on_batch");
  check_inputs(*this, x, &y);
  metrics::Mean loss_tracker("loss");
  std::vector<std::unique_ptr<metrics::Metric>> metrics;
  run_batch(x, y, true, loss_tracker, metrics);
  Logs logs = collect_logs(loss_tracker, metrics);
  return std::map<std::string, double>(logs.begin(), logs.end());
}

History Sequential::fit(const Tensor& x, const Tensor& y, const FitOptions& options) {
  require_compiled("fit");
  check_inputs(*this, x, &y);
  loss_->validate_targets(y, output_shape(1));
  // As Keras with arrays: the whole set reshuffled every epoch.
  data::Dataset samples = data::Dataset::from_tensor_slices({x, y});
  if (options.shuffle) samples = samples.shuffle(x.shape()[0], options.shuffle_seed);
  check_argument(options.batch_size > 0,
                 "batch_size must be positive, got " + std::to_string(options.batch_size));
  return fit(samples.batch(options.batch_size), options);
}

History Sequential::fit(const data::Dataset& dataset, const FitOptions& options) {
  require_compiled("fit");
  check_argument(options.epochs >= 0, "epochs must be >= 0, got " + std::to_string(options.epochs));
  check_argument(dataset.cardinality() != data::INFINITE_CARDINALITY,
                 "the training dataset is infinite (repeat() without a count); pass a finite "
                 "one, e.g. with take(steps)");
  std::optional<data::Dataset> validation = options.validation_dataset;
  if (!validation && options.validation_data) {
    validation = batched(options.validation_data->first, options.validation_data->second,
                         options.batch_size);
  }
  metrics::Mean loss_tracker("loss");
  std::vector<std::unique_ptr<metrics::Metric>> metrics;  // made from the first labels seen
  bool warned_input_bound = false;
  History history;

  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    loss_tracker.reset_state();
    for (auto& metric : metrics) metric->reset_state();
    if (options.verbose > 0) std::printf("Epoch %d/%d\n", epoch + 1, options.epochs);
    ProgressBar bar(dataset.cardinality(), options.verbose);
    Clock::time_point epoch_start = Clock::now();
    double waiting = 0;
    int64_t steps = 0;
    auto iterator = dataset.iterate(uint64_t(epoch));
    while (true) {
      Clock::time_point wait_start = Clock::now();
      std::optional<data::Element> batch = iterator->next();
      waiting += seconds_since(wait_start);
      if (!batch) break;
      auto [x, y] = features_and_labels(*this, *batch);
      run_batch(x, y, true, loss_tracker, metrics);
      bar.update(++steps, collect_logs(loss_tracker, metrics));
    }
    check_argument(steps > 0, "the training dataset produced no batches in epoch " +
                                  std::to_string(epoch + 1) +
                                  ": it is empty (check its source, take, skip, filter, shard)");
    double elapsed = seconds_since(epoch_start);
    if (!warned_input_bound && waiting > input_bound_share * elapsed) {
      std::fprintf(stderr,
                   "WARNING: training waited for input %.0f%% of epoch %d (%.2f s of %.2f s): "
                   "the input pipeline is the bottleneck. Add .prefetch(AUTOTUNE) at its end, "
                   "map(fn, AUTOTUNE) for parallel preprocessing, or .cache() after loading.\n",
                   100 * waiting / elapsed, epoch + 1, waiting, elapsed);
      warned_input_bound = true;
    }
    Logs logs = collect_logs(loss_tracker, metrics);
    if (validation) {
      auto results = evaluate(*validation, 0);
      for (const auto& [name, value] : collect_logs(loss_tracker, metrics)) {  // Keras' order
        logs.push_back({"val_" + name, results.at(name)});
      }
    }
    bar.finish(logs, steps);
    history.epoch.push_back(epoch);
    for (const auto& [name, value] : logs) history.history[name].push_back(value);
  }
  return history;
}

std::map<std::string, double> Sequential::evaluate(const Tensor& x, const Tensor& y,
                                                   int64_t batch_size, int verbose) {
  require_compiled("evaluate");
  check_inputs(*this, x, &y);
  loss_->validate_targets(y, output_shape(1));
  return evaluate(batched(x, y, batch_size), verbose);
}

std::map<std::string, double> Sequential::evaluate(const data::Dataset& dataset, int verbose) {
  require_compiled("evaluate");
  metrics::Mean loss_tracker("loss");
  std::vector<std::unique_ptr<metrics::Metric>> metrics;
  ProgressBar bar(dataset.cardinality(), verbose);
  int64_t steps = 0;
  auto iterator = dataset.iterate();
  while (auto batch = iterator->next()) {
    auto [x, y] = features_and_labels(*this, *batch);
    run_batch(x, y, false, loss_tracker, metrics);
    bar.update(++steps, collect_logs(loss_tracker, metrics));
  }
  check_argument(steps > 0, "the evaluation dataset produced no batches: it is empty");
  Logs logs = collect_logs(loss_tracker, metrics);
  bar.finish(logs, steps);
  return std::map<std::string, double>(logs.begin(), logs.end());
}

Tensor Sequential::predict(const Tensor& x, int64_t batch_size) {
  check_inputs(*this, x, nullptr);
  check_argument(batch_size > 0, "batch_size must be positive, got " + std::to_string(batch_size));
  Tensor predictions(output_shape(x.shape()[0]));
  for (int64_t begin = 0; begin < x.shape()[0]; begin += batch_size) {
    int64_t end = std::min(begin + batch_size, x.shape()[0]);
    CompiledStep& step = compiled_step(end - begin, false);
    copy_into(x.slice_batch(begin, end), step.input());
    step.forward(false);
    Tensor rows = predictions.slice_batch(begin, end);
    copy_into(step.output(), rows);
  }
  return predictions;
}

}  // namespace tenfold::models
