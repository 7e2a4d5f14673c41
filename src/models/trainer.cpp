// The training loop of Sequential: fit, evaluate, predict (Keras' Trainer).
#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/error.h"
#include "core/random.h"
#include "models/progress_bar.h"
#include "models/sequential.h"

namespace tenfold::models {

namespace {

/// Copies rows `indices` of `source` (first dimension) into the first rows of `destination`.
void gather_rows(const Tensor& source, std::span<const int64_t> indices, Tensor& destination) {
  size_t row_bytes = source.num_bytes() / size_t(source.shape()[0]);
  const auto* from = static_cast<const std::byte*>(source.raw_data());
  auto* to = static_cast<std::byte*>(destination.raw_data());
  for (size_t i = 0; i < indices.size(); ++i) {
    std::memcpy(to + i * row_bytes, from + size_t(indices[i]) * row_bytes, row_bytes);
  }
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

Logs collect_logs(const metrics::Metric& loss,
                  const std::vector<std::unique_ptr<metrics::Metric>>& metrics) {
  Logs logs = {{"loss", loss.result()}};
  for (const auto& metric : metrics) logs.push_back({metric->name(), metric->result()});
  return logs;
}

}  // namespace

std::vector<std::unique_ptr<metrics::Metric>> Sequential::make_metrics(const Tensor& y) const {
  std::vector<std::unique_ptr<metrics::Metric>> result;
  for (const auto& name : metric_names_) {
    result.push_back(metrics::get(name, y.shape(), output_shape(y.shape()[0])));
  }
  return result;
}

template <typename Each>
void Sequential::run_inference(const Tensor& x, int64_t batch_size, Each each) {
  check_argument(batch_size > 0, "batch_size must be positive, got " + std::to_string(batch_size));
  int64_t samples = x.shape()[0];
  std::vector<int64_t> rows(size_t(std::min(batch_size, samples)));
  for (int64_t begin = 0; begin < samples; begin += batch_size) {
    int64_t count = std::min(batch_size, samples - begin);
    CompiledStep& step = compiled_step(count, false);
    std::iota(rows.begin(), rows.begin() + count, begin);
    gather_rows(x, std::span(rows.data(), size_t(count)), step.input());
    step.forward(false);
    each(begin, count, step);
  }
}

void Sequential::train_batch(const Tensor& x, const Tensor& y, std::span<const int64_t> rows,
                             metrics::Metric& loss_tracker,
                             std::vector<std::unique_ptr<metrics::Metric>>& metrics) {
  int64_t count = int64_t(rows.size());
  CompiledStep& step = compiled_step(count, true);
  Tensor& labels = step.labels(y.shape().without_batch(), y.dtype());
  gather_rows(x, rows, step.input());
  gather_rows(y, rows, labels);
  step.forward(true);
  double loss_sum = step.backward(*loss_, labels, double(count));
  optimizer_->apply_gradients(step.weight_gradients());
  loss_tracker.add(loss_sum, double(count));
  for (auto& metric : metrics) metric->update_state(labels, step.output());
}

void Sequential::require_compiled(const std::string& action) const {
  check_argument(optimizer_ != nullptr, "model '" + name_ + "' must be compiled before " + action +
                                            ": call compile(optimizer, loss, metrics)");
}

std::map<std::string, double> Sequential::train_on_batch(const Tensor& x, const Tensor& y) {
  require_compiled("train_on_batch");
  check_inputs(*this, x, &y);
  loss_->validate_targets(y, output_shape(1));
  metrics::Mean loss_tracker("loss");
  auto metrics = make_metrics(y);
  std::vector<int64_t> rows(static_cast<size_t>(x.shape()[0]));
  std::iota(rows.begin(), rows.end(), 0);
  train_batch(x, y, rows, loss_tracker, metrics);
  Logs logs = collect_logs(loss_tracker, metrics);
  return std::map<std::string, double>(logs.begin(), logs.end());
}

History Sequential::fit(const Tensor& x, const Tensor& y, const FitOptions& options) {
  require_compiled("fit");
  check_inputs(*this, x, &y);
  check_argument(options.batch_size > 0 && options.epochs >= 0,
                 "fit needs batch_size > 0 and epochs >= 0, got batch_size " +
                     std::to_string(options.batch_size) + ", epochs " +
                     std::to_string(options.epochs));
  loss_->validate_targets(y, output_shape(1));
  const int64_t samples = x.shape()[0];
  const int64_t steps_per_epoch = (samples + options.batch_size - 1) / options.batch_size;
  std::vector<int64_t> order(static_cast<size_t>(samples));
  std::iota(order.begin(), order.end(), 0);
  Random shuffle_random(options.shuffle_seed);
  metrics::Mean loss_tracker("loss");
  auto metrics = make_metrics(y);
  History history;

  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    if (options.shuffle) {
      for (int64_t i = samples - 1; i > 0; --i) {
        std::swap(order[size_t(i)], order[shuffle_random.below(uint64_t(i) + 1)]);
      }
    }
    loss_tracker.reset_state();
    for (auto& metric : metrics) metric->reset_state();
    if (options.verbose > 0) std::printf("Epoch %d/%d\n", epoch + 1, options.epochs);
    ProgressBar bar(steps_per_epoch, options.verbose);
    for (int64_t step_index = 0; step_index < steps_per_epoch; ++step_index) {
      int64_t begin = step_index * options.batch_size;
      int64_t count = std::min(options.batch_size, samples - begin);
      train_batch(x, y, std::span<const int64_t>(order.data() + begin, size_t(count)),
                  loss_tracker, metrics);
      bar.update(step_index + 1, collect_logs(loss_tracker, metrics));
    }
    Logs logs = collect_logs(loss_tracker, metrics);
    if (options.validation_data) {
      auto validation = evaluate(options.validation_data->first, options.validation_data->second,
                                 options.batch_size, 0);
      logs.push_back({"val_loss", validation.at("loss")});
      for (const auto& metric : metrics) logs.push_back({"val_" + metric->name(), validation.at(metric->name())});
    }
    bar.finish(logs);
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
  metrics::Mean loss_tracker("loss");
  auto metrics = make_metrics(y);
  ProgressBar bar((x.shape()[0] + batch_size - 1) / batch_size, verbose);
  run_inference(x, batch_size, [&](int64_t begin, int64_t count, CompiledStep& step) {
    Tensor batch_labels = y.slice_batch(begin, begin + count);
    loss_tracker.add(step.compute_loss(*loss_, batch_labels, double(count), nullptr),
                     double(count));
    for (auto& metric : metrics) metric->update_state(batch_labels, step.output());
  });
  Logs logs = collect_logs(loss_tracker, metrics);
  bar.finish(logs);
  std::map<std::string, double> result(logs.begin(), logs.end());
  return result;
}

Tensor Sequential::predict(const Tensor& x, int64_t batch_size) {
  check_inputs(*this, x, nullptr);
  Tensor predictions(output_shape(x.shape()[0]));
  run_inference(x, batch_size, [&](int64_t begin, int64_t count, CompiledStep& step) {
    Tensor rows = predictions.slice_batch(begin, begin + count);
    std::memcpy(rows.raw_data(), step.output().raw_data(), step.output().num_bytes());
  });
  return predictions;
}

}  // namespace tenfold::models
