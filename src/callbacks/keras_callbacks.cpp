#include "callbacks/keras_callbacks.h"

#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "io/model_file.h"
#include "models/sequential.h"

namespace tenfold::callbacks {

namespace {

/// The monitored value, or an error naming what the logs hold.
double monitored(const Logs& logs, const std::string& monitor, const char* callback) {
  if (const double* value = find_log(logs, monitor)) return *value;
  std::string available;
  for (const auto& [key, value] : logs) {
    if (!available.empty()) available += ", ";
    available += key;
  }
  throw Error(ErrorCode::invalid_argument, std::string(callback) + " monitors '" + monitor +
                                               "', which the logs do not hold (they hold: " + available +
                                               "); validation values need validation data");
}

/// True when `value` is better than `best` by more than min_delta (as Keras, which starts from
/// +-infinity: NaN is never an improvement).
bool improved(double value, const std::optional<double>& best, bool upward, double min_delta) {
  if (std::isnan(value)) return false;
  if (!best) return true;
  return upward ? value > *best + min_delta : value < *best - min_delta;
}

/// Keras' filepath placeholders: {epoch}, {epoch:02d}, {name}, {name:.2f} (epoch is 1-based).
std::string format_path(const std::string& pattern, int epoch, const Logs& logs) {
  static const std::regex placeholder(R"(\{(\w+)(?::([^}]*))?\})");
  std::string result;
  auto begin = std::sregex_iterator(pattern.begin(), pattern.end(), placeholder);
  size_t last = 0;
  for (auto match = begin; match != std::sregex_iterator(); ++match) {
    result += pattern.substr(last, size_t(match->position()) - last);
    std::string name = (*match)[1], spec = (*match)[2];
    // Only plain numeric specs reach printf, each with the conversion its value needs.
    static const std::regex integer_spec(R"([-+ 0#]?\d{0,3}d)"), float_spec(R"([-+ 0#]?\d{0,3}(\.\d{1,2})?[feg])");
    check_argument(spec.empty() || std::regex_match(spec, name == "epoch" ? integer_spec : float_spec),
                   "checkpoint path '" + pattern + "': '{" + name + ":" + spec + "}' is not a format this "
                   "placeholder takes (epoch: like 02d; values: like .2f)");
    char text[64];
    if (name == "epoch") {
      std::string format = "%";
      format += spec.empty() ? std::string("d") : spec;
      std::snprintf(text, sizeof text, format.c_str(), epoch + 1);
    } else {
      const double* value = find_log(logs, name);
      check_argument(value != nullptr, "checkpoint path '" + pattern + "' names '" + name +
                                           "', which the logs do not hold");
      std::string format = "%";
      format += spec.empty() ? std::string("f") : spec;
      std::snprintf(text, sizeof text, format.c_str(), *value);
    }
    result += text;
    last = size_t(match->position() + match->length());
  }
  return result + pattern.substr(last);
}

}  // namespace

bool monitor_improves_upward(const std::string& monitor, const std::string& mode) {
  check_argument(mode == "auto" || mode == "min" || mode == "max",
                 "mode must be \"auto\", \"min\" or \"max\", got \"" + mode + "\"");
  if (mode != "auto") return mode == "max";
  return monitor.find("acc") != std::string::npos || monitor.find("auc") != std::string::npos;
}

ModelCheckpoint::ModelCheckpoint(std::string filepath, Options options)
    : filepath_(std::move(filepath)), options_(std::move(options)) {
  monitor_improves_upward(options_.monitor, options_.mode);  // checks the mode
  bool weights_file = filepath_.size() >= 11 && filepath_.substr(filepath_.size() - 11) == ".weights.h5";
  check_argument(options_.save_weights_only == weights_file,
                 options_.save_weights_only
                     ? "with save_weights_only the checkpoint path must end in .weights.h5, got '" + filepath_ + "'"
                     : "a .weights.h5 path holds weights only: set save_weights_only, or save the model to .h5");
}

void ModelCheckpoint::on_epoch_end(int epoch, const Logs& logs) {
  if (options_.save_best_only) {
    double value = monitored(logs, options_.monitor, "ModelCheckpoint");
    bool upward = monitor_improves_upward(options_.monitor, options_.mode);
    if (!improved(value, best_, upward, 0)) return;
    if (options_.verbose > 0 && model().strategy().is_chief()) {
      std::printf("\nEpoch %d: %s improved to %.5f, saving model\n", epoch + 1, options_.monitor.c_str(), value);
    }
    best_ = value;
  }
  if (!model().strategy().is_chief()) return;
  std::string path = format_path(filepath_, epoch, logs);
  if (options_.save_weights_only) {
    io::save_weights(model(), path);
  } else {
    io::save_model(model(), path);
  }
}

void EarlyStopping::on_train_begin() {
  best_.reset();
  wait_ = 0;
  stopped_epoch_ = 0;
  best_weights_.clear();
}

void EarlyStopping::on_epoch_end(int epoch, const Logs& logs) {
  double value = monitored(logs, options_.monitor, "EarlyStopping");
  if (improved(value, best_, monitor_improves_upward(options_.monitor, options_.mode), options_.min_delta)) {
    best_ = value;
    wait_ = 0;
    if (options_.restore_best_weights) {
      best_weights_.clear();
      for (Variable* weight : model().weights()) best_weights_.push_back(weight->read());
    }
    return;
  }
  if (++wait_ >= options_.patience && epoch > 0) {  // as Keras: wait counts the epochs without improvement
    stopped_epoch_ = epoch;
    model().stop_training();
  }
}

void EarlyStopping::on_train_end(const Logs&) {
  if (stopped_epoch_ > 0 && options_.verbose > 0 && model().strategy().is_chief()) {
    std::printf("Epoch %d: early stopping\n", stopped_epoch_ + 1);
  }
  // As Keras 3: the best epoch's weights come back whether or not training stopped early.
  if (options_.restore_best_weights && !best_weights_.empty()) {
    std::vector<Variable*> weights = model().weights();
    for (size_t i = 0; i < weights.size(); ++i) weights[i]->assign(best_weights_[i]);
  }
}

void TerminateOnNaN::on_train_batch_end(int64_t batch, const Logs& logs) {
  const double* loss = find_log(logs, "loss");
  if (loss && !std::isfinite(*loss)) {
    std::printf("Batch %lld: Invalid loss, terminating training\n", static_cast<long long>(batch));
    model().stop_training();
  }
}

void CSVLogger::on_train_begin() {
  keys_.clear();
  header_written_ = false;
  if (!model().strategy().is_chief()) return;
  if (append_) {  // continue under the existing header's columns
    std::ifstream existing(filename_);
    std::string header;
    if (std::getline(existing, header) && !header.empty()) {
      std::stringstream columns(header);
      std::string key;
      std::getline(columns, key, separator_);  // "epoch"
      while (std::getline(columns, key, separator_)) keys_.push_back(key);
      header_written_ = true;
    }
  }
  file_.open(filename_, append_ ? std::ios::app : std::ios::trunc);
  if (!file_) throw Error(ErrorCode::unavailable, "CSVLogger cannot write " + filename_);
}

void CSVLogger::on_epoch_end(int epoch, const Logs& logs) {
  if (!file_.is_open()) return;
  if (!header_written_) {
    for (const auto& [key, value] : logs) keys_.push_back(key);
    std::sort(keys_.begin(), keys_.end());
    file_ << "epoch";
    for (const std::string& key : keys_) file_ << separator_ << key;
    file_ << "\n";
    header_written_ = true;
  }
  file_ << epoch;
  char text[32];
  for (const std::string& key : keys_) {
    const double* value = find_log(logs, key);
    if (value) std::snprintf(text, sizeof text, "%.17g", *value);
    file_ << separator_ << (value ? text : "NA");  // Keras writes NA for a missing value
  }
  file_ << "\n";
  file_.flush();
}

void LearningRateScheduler::on_epoch_begin(int epoch) {
  optimizers::Optimizer& optimizer = *model().optimizer();
  double rate = schedule_(epoch, optimizer.learning_rate());
  check_argument(std::isfinite(rate) && rate >= 0,
                 "the learning rate schedule gave " + std::to_string(rate) + " for epoch " + std::to_string(epoch));
  optimizer.set_learning_rate(float(rate));
}

ReduceLROnPlateau::ReduceLROnPlateau(Options options) : options_(std::move(options)) {
  check_argument(options_.factor < 1, "ReduceLROnPlateau's factor must be < 1, got " + std::to_string(options_.factor));
  monitor_improves_upward(options_.monitor, options_.mode);
}

void ReduceLROnPlateau::on_epoch_end(int, const Logs& logs) {
  double value = monitored(logs, options_.monitor, "ReduceLROnPlateau");
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    wait_ = 0;
  }
  if (improved(value, best_, monitor_improves_upward(options_.monitor, options_.mode), options_.min_delta)) {
    best_ = value;
    wait_ = 0;
    return;
  }
  if (cooldown_left_ == 0 && ++wait_ >= options_.patience) {
    optimizers::Optimizer& optimizer = *model().optimizer();
    double reduced = std::max(double(optimizer.learning_rate()) * options_.factor, options_.min_lr);
    optimizer.set_learning_rate(float(reduced));
    cooldown_left_ = options_.cooldown;
    wait_ = 0;
  }
}

}  // namespace tenfold::callbacks
