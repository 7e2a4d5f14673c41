#pragma once
// Keras metrics. Each keeps its state as sums (a running mean's total and count, a confusion
// matrix's counts), reset every epoch; replicas and workers combine states by adding them,
// so a metric over the global batch is exact, not an average of per-replica results.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.h"
#include "losses/loss.h"

namespace tenfold::metrics {

class Metric {
 public:
  /// A running mean: state (total, count).
  explicit Metric(std::string name, size_t state_size = 2)
      : name_(std::move(name)), state_(state_size, 0.0) {}
  virtual ~Metric() = default;
  const std::string& name() const { return name_; }
  /// Adds one batch: y_pred [batch, ...], y_true as the metric expects.
  virtual void update_state(const Tensor& y_true, const Tensor& y_pred) = 0;
  /// total / count by default.
  virtual double result() const { return state_[1] > 0 ? state_[0] / state_[1] : 0.0; }
  /// The sums; adding two metrics' states gives the metric of both batches.
  const std::vector<double>& state() const { return state_; }
  void set_state(std::vector<double> state);
  void reset_state() { std::fill(state_.begin(), state_.end(), 0.0); }
  /// Adds a total over `count` samples to a running mean.
  void add(double total, double count) { state_[0] += total; state_[1] += count; }

 protected:
  std::vector<double>& mutable_state() { return state_; }

 private:
  std::string name_;
  std::vector<double> state_;
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

/// (y_pred > threshold) == y_true, elementwise.
class BinaryAccuracy : public Metric {
 public:
  explicit BinaryAccuracy(std::string name = "binary_accuracy", double threshold = 0.5)
      : Metric(std::move(name)), threshold_(threshold) {}
  void update_state(const Tensor& y_true, const Tensor& y_pred) override;

 private:
  double threshold_;
};

/// The true class among the k highest predictions (ties: Keras' in_top_k counts a class tied
/// with the k-th as in); labels one-hot, or integers when `sparse`.
class TopKCategoricalAccuracy : public Metric {
 public:
  TopKCategoricalAccuracy(std::string name, int64_t k, bool sparse)
      : Metric(std::move(name)), k_(k), sparse_(sparse) {}
  void update_state(const Tensor& y_true, const Tensor& y_pred) override;

 private:
  int64_t k_;
  bool sparse_;
};

/// Keras' MeanMetricWrapper of a loss function: the mean over samples of the loss's
/// per-sample values (MeanAbsoluteError, MeanSquaredError, ...); with `root`, the square root
/// of that mean (RootMeanSquaredError over mean_squared_error).
class LossMean : public Metric {
 public:
  LossMean(std::string name, std::shared_ptr<losses::Loss> loss, bool root = false)
      : Metric(std::move(name)), loss_(std::move(loss)), root_(root) {}
  void update_state(const Tensor& y_true, const Tensor& y_pred) override;
  double result() const override;

 private:
  std::shared_ptr<losses::Loss> loss_;
  bool root_;
};

/// Counts over every element of y_pred > threshold against y_true != 0: Precision
/// tp / (tp + fp), Recall tp / (tp + fn) (0 when undefined, as Keras' divide_no_nan).
class ThresholdedCounts : public Metric {
 public:
  enum class Kind { precision, recall };
  ThresholdedCounts(std::string name, Kind kind, double threshold)
      : Metric(std::move(name), 3), kind_(kind), threshold_(threshold) {}
  void update_state(const Tensor& y_true, const Tensor& y_pred) override;
  double result() const override;

 private:
  Kind kind_;
  double threshold_;
};

/// keras.metrics.AUC (single label): tp, fp, tn, fn at num_thresholds evenly spaced
/// thresholds, bucketed as Keras does; the ROC curve's or the PR curve's area, by Keras'
/// interpolation (Davis & Goadrich for PR), minoring or majoring sums.
class AUC : public Metric {
 public:
  enum class Curve { roc, pr };
  enum class Summation { interpolation, minoring, majoring };
  AUC(std::string name, int64_t num_thresholds = 200, Curve curve = Curve::roc,
      Summation summation = Summation::interpolation, bool from_logits = false);
  void update_state(const Tensor& y_true, const Tensor& y_pred) override;
  double result() const override;

 private:
  int64_t thresholds_;
  Curve curve_;
  Summation summation_;
  bool from_logits_;
};

/// keras.metrics.F1Score / FBetaScore averaged over the classes ("micro", "macro",
/// "weighted"): per class tp, fp, fn of (y_pred > threshold, or the row's argmax when no
/// threshold) against one-hot y_true.
class FBetaScore : public Metric {
 public:
  enum class Average { micro, macro, weighted };
  FBetaScore(std::string name, int64_t classes, Average average, double beta, std::optional<double> threshold);
  void update_state(const Tensor& y_true, const Tensor& y_pred) override;
  double result() const override;

 private:
  int64_t classes_;
  Average average_;
  double beta_;
  std::optional<double> threshold_;
};

/// The name Keras reports a metric by: the name it was given, or a serialized metric's config
/// name (its class name without one).
std::string name_of(const nlohmann::json& metric);

/// Resolves a metric as Keras' compile does, from a name or a serialized metric object.
/// "accuracy"/"acc" becomes binary accuracy for one output unit, sparse categorical accuracy
/// when labels have fewer dimensions than predictions (or a last dimension of 1), categorical
/// otherwise. The metric keeps the name it was asked for (an object: its config's name), or
/// `reported_as` when given (Keras' "<output>_accuracy").
std::unique_ptr<Metric> get(const nlohmann::json& metric, const Shape& y_true, const Shape& y_pred,
                            const std::string& reported_as = "");

}  // namespace tenfold::metrics
