#pragma once
// Keras metrics as running means: each keeps a total and a count, reset every epoch, and two
// states merge by adding (how replicas and workers combine them).
#include <memory>
#include <string>

#include "core/tensor.h"

namespace tenfold::metrics {

class Metric {
 public:
  explicit Metric(std::string name) : name_(std::move(name)) {}
  virtual ~Metric() = default;
  const std::string& name() const { return name_; }
  /// Adds one batch: y_pred [batch, classes].
  virtual void update_state(const Tensor& y_true, const Tensor& y_pred) = 0;
  /// Adds a precomputed total over `count` samples (e.g. another replica's state).
  void add(double total, double count) { total_ += total; count_ += count; }
  double result() const { return count_ > 0 ? total_ / count_ : 0.0; }
  double total() const { return total_; }
  double count() const { return count_; }
  void reset_state() { total_ = 0; count_ = 0; }

 private:
  std::string name_;
  double total_ = 0, count_ = 0;
};

/// A weighted mean of values given with add() (the loss tracker).
class Mean : public Metric {
 public:
  explicit Mean(std::string name) : Metric(std::move(name)) {}
  void update_state(const Tensor&, const Tensor&) override {}
};

/// argmax(y_pred) == y_true, for integer labels.
class SparseCategoricalAccuracy : public Metric {
 public:
  explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy")
      : Metric(std::move(name)) {}
  void update_state(const Tensor& y_true, const Tensor& y_pred) override;
};

/// argmax(y_pred) == argmax(y_true), for one-hot labels.
class CategoricalAccuracy : public Metric {
 public:
  explicit CategoricalAccuracy(std::string name = "categorical_accuracy")
      : Metric(std::move(name)) {}
  void update_state(const Tensor& y_true, const Tensor& y_pred) override;
};

/// (y_pred > 0.5) == y_true, for one output unit.
class BinaryAccuracy : public Metric {
 public:
  explicit BinaryAccuracy(std::string name = "binary_accuracy") : Metric(std::move(name)) {}
  void update_state(const Tensor& y_true, const Tensor& y_pred) override;
};

/// Resolves a metric name as Keras' compile does: "accuracy"/"acc" becomes binary accuracy for
/// one output unit, sparse categorical accuracy when labels have fewer dimensions than
/// predictions (or a last dimension of 1), categorical otherwise; the metric keeps the name
/// it was asked for, or `reported_as` when given (Keras' "<output>_accuracy").
std::unique_ptr<Metric> get(const std::string& name, const Shape& y_true, const Shape& y_pred,
                            const std::string& reported_as = "");

}  // namespace tenfold::metrics
