#include "metrics/metric.h"

#include <algorithm>
#include <cmath>

#include "core/config_reader.h"
#include "core/error.h"
#include "core/keras_epsilon.h"
#include "kernels/reference/activation.h"

namespace tenfold::metrics {

namespace {

int64_t argmax_row(const float* row, int64_t classes) {
  return std::max_element(row, row + classes) - row;
}

/// Keras' divide_no_nan.
double divide_no_nan(double a, double b) { return b == 0 ? 0.0 : a / b; }

}  // namespace

void Metric::set_state(std::vector<double> state) {
  check_argument(state.size() == state_.size(), "metric '" + name_ + "' keeps " + std::to_string(state_.size()) +
                                                    " sums, got " + std::to_string(state.size()));
  state_ = std::move(state);
}

void SparseCategoricalAccuracy::update_state(const Tensor& y_true, const Tensor& y_pred) {
  const int64_t classes = y_pred.shape()[y_pred.shape().rank() - 1], rows = y_pred.num_elements() / classes;
  double correct = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t label = losses::sparse_label(y_true, r, classes);
    correct += argmax_row(y_pred.data<float>() + r * classes, classes) == label ? 1 : 0;
  }
  add(correct, double(rows));
}

void CategoricalAccuracy::update_state(const Tensor& y_true, const Tensor& y_pred) {
  const int64_t classes = y_pred.shape()[y_pred.shape().rank() - 1], rows = y_pred.num_elements() / classes;
  double correct = 0;
  for (int64_t r = 0; r < rows; ++r) {
    correct += argmax_row(y_pred.data<float>() + r * classes, classes) ==
                       argmax_row(y_true.data<float>() + r * classes, classes)
                   ? 1
                   : 0;
  }
  add(correct, double(rows));
}

void BinaryAccuracy::update_state(const Tensor& y_true, const Tensor& y_pred) {
  int64_t count = y_pred.num_elements();
  double correct = 0;
  for (int64_t i = 0; i < count; ++i) {
    float predicted = y_pred.data<float>()[i] > threshold_ ? 1.0f : 0.0f;
    correct += predicted == y_true.data<float>()[i] ? 1 : 0;
  }
  add(correct, double(count));
}

void TopKCategoricalAccuracy::update_state(const Tensor& y_true, const Tensor& y_pred) {
  check_argument(sparse_ || y_true.shape() == y_pred.shape(),
                 name() + " expects one-hot targets shaped like the predictions " + y_pred.shape().to_string() +
                     ", got " + y_true.shape().to_string() + "; for integer labels use sparse_top_k_categorical_accuracy");
  // Every position of [batch, ..., classes] is a row, as Keras flattens them.
  const int64_t classes = y_pred.shape()[y_pred.shape().rank() - 1], rows = y_pred.num_elements() / classes;
  double correct = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = y_pred.data<float>() + r * classes;
    const int64_t label = sparse_ ? losses::sparse_label(y_true, r, classes)
                                  : argmax_row(y_true.data<float>() + r * classes, classes);
    // In the top k when fewer than k classes score strictly higher (tf.math.in_top_k).
    const int64_t higher = std::count_if(p, p + classes, [&](float v) { return v > p[label]; });
    correct += std::isfinite(p[label]) && higher < k_ ? 1 : 0;
  }
  add(correct, double(rows));
}

void LossMean::update_state(const Tensor& y_true, const Tensor& y_pred) {
  add(loss_->compute(y_pred, y_true, false, 1.0, nullptr), double(y_pred.shape()[0]));
}

double LossMean::result() const { return root_ ? std::sqrt(Metric::result()) : Metric::result(); }

void ThresholdedCounts::update_state(const Tensor& y_true, const Tensor& y_pred) {
  check_argument(y_true.num_elements() == y_pred.num_elements(),
                 name() + " expects targets shaped like the predictions " + y_pred.shape().to_string() + ", got " +
                     y_true.shape().to_string());
  std::vector<double>& counts = mutable_state();  // tp, fp, fn
  const float* p = y_pred.data<float>();
  const float* t = y_true.data<float>();
  for (int64_t i = 0; i < y_pred.num_elements(); ++i) {
    const bool predicted = p[i] > threshold_, positive = t[i] != 0;
    counts[0] += predicted && positive;
    counts[1] += predicted && !positive;
    counts[2] += !predicted && positive;
  }
}

double ThresholdedCounts::result() const {
  const std::vector<double>& c = state();
  return kind_ == Kind::precision ? divide_no_nan(c[0], c[0] + c[1]) : divide_no_nan(c[0], c[0] + c[2]);
}

AUC::AUC(std::string name, int64_t num_thresholds, Curve curve, Summation summation, bool from_logits)
    : Metric(std::move(name), size_t(4 * num_thresholds)), thresholds_(num_thresholds), curve_(curve),
      summation_(summation), from_logits_(from_logits) {
  check_argument(num_thresholds > 1, "AUC's num_thresholds must be an integer > 1, got " + std::to_string(num_thresholds));
}

void AUC::update_state(const Tensor& y_true, const Tensor& y_pred) {
  check_argument(y_true.num_elements() == y_pred.num_elements(),
                 name() + " expects targets shaped like the predictions " + y_pred.shape().to_string() + ", got " +
                     y_true.shape().to_string());
  // Keras' evenly spaced thresholds: prediction p lands in bucket max(ceil(p (n - 1)) - 1, 0)
  // and counts as positive at every threshold up to its bucket.
  const int64_t n = thresholds_;
  std::vector<double> true_in(size_t(n), 0.0), false_in(size_t(n), 0.0);
  double all_true = 0, all_false = 0;
  const float* p = y_pred.data<float>();
  const float* t = y_true.data<float>();
  for (int64_t i = 0; i < y_pred.num_elements(); ++i) {
    float value = from_logits_ ? kernels::reference::sigmoid(p[i]) : p[i];
    value = std::clamp(value, 0.0f, 1.0f);
    const int64_t bucket = std::max<int64_t>(int64_t(std::ceil(value * float(n - 1))) - 1, 0);
    const bool positive = t[i] != 0;
    (positive ? true_in : false_in)[size_t(bucket)] += 1;
    (positive ? all_true : all_false) += 1;
  }
  std::vector<double>& s = mutable_state();  // tp[n], fp[n], tn[n], fn[n]
  double tp = 0, fp = 0;
  for (int64_t i = n - 1; i >= 0; --i) {
    tp += true_in[size_t(i)];
    fp += false_in[size_t(i)];
    s[size_t(i)] += tp;
    s[size_t(n + i)] += fp;
    s[size_t(2 * n + i)] += all_false - fp;
    s[size_t(3 * n + i)] += all_true - tp;
  }
}

double AUC::result() const {
  const int64_t n = thresholds_;
  const std::vector<double>& s = state();
  auto tp = [&](int64_t i) { return s[size_t(i)]; };
  auto fp = [&](int64_t i) { return s[size_t(n + i)]; };
  auto tn = [&](int64_t i) { return s[size_t(2 * n + i)]; };
  auto fn = [&](int64_t i) { return s[size_t(3 * n + i)]; };
  double area = 0;
  if (curve_ == Curve::pr && summation_ == Summation::interpolation) {
    // Davis & Goadrich: precision interpolated linearly in the predicted positives P.
    for (int64_t i = 0; i + 1 < n; ++i) {
      const double dtp = tp(i) - tp(i + 1), p_a = tp(i) + fp(i), p_b = tp(i + 1) + fp(i + 1);
      const double slope = divide_no_nan(dtp, std::max(p_a - p_b, 0.0));
      const double intercept = tp(i + 1) - slope * p_b;
      const double ratio = p_a > 0 && p_b > 0 ? divide_no_nan(p_a, std::max(p_b, 0.0)) : 1.0;
      area += divide_no_nan(slope * (dtp + intercept * std::log(ratio)), std::max(tp(i + 1) + fn(i + 1), 0.0));
    }
    return area;
  }
  auto x = [&](int64_t i) {
    return curve_ == Curve::roc ? divide_no_nan(fp(i), fp(i) + tn(i)) : divide_no_nan(tp(i), tp(i) + fn(i));
  };
  auto y = [&](int64_t i) {
    return curve_ == Curve::roc ? divide_no_nan(tp(i), tp(i) + fn(i)) : divide_no_nan(tp(i), tp(i) + fp(i));
  };
  for (int64_t i = 0; i + 1 < n; ++i) {
    const double height = summation_ == Summation::interpolation ? (y(i) + y(i + 1)) / 2
                          : summation_ == Summation::minoring    ? std::min(y(i), y(i + 1))
                                                                 : std::max(y(i), y(i + 1));
    area += (x(i) - x(i + 1)) * height;
  }
  return area;
}

FBetaScore::FBetaScore(std::string name, int64_t classes, Average average, double beta, std::optional<double> threshold)
    : Metric(std::move(name), size_t(4 * classes)), classes_(classes), average_(average), beta_(beta), threshold_(threshold) {
  check_argument(beta > 0, "FBetaScore's beta must be positive, got " + std::to_string(beta));
}

void FBetaScore::update_state(const Tensor& y_true, const Tensor& y_pred) {
  check_argument(y_true.shape() == y_pred.shape(), name() + " expects one-hot targets shaped like the predictions " +
                                                       y_pred.shape().to_string() + ", got " + y_true.shape().to_string());
  const int64_t rows = y_pred.num_elements() / classes_, c = classes_;
  std::vector<double>& s = mutable_state();  // tp[c], fp[c], fn[c], positives[c]
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = y_pred.data<float>() + r * c;
    const float* t = y_true.data<float>() + r * c;
    // Without a threshold, the row's maximum (ties all count), unless it is zero.
    const float cut = threshold_ ? float(*threshold_) : *std::max_element(p, p + c);
    for (int64_t k = 0; k < c; ++k) {
      const double predicted = threshold_ ? p[k] > cut : (p[k] >= cut && std::abs(p[k]) > 1e-9f);
      const double truth = t[k];
      s[size_t(k)] += predicted * truth;
      s[size_t(c + k)] += predicted * (1 - truth);
      s[size_t(2 * c + k)] += (1 - predicted) * truth;
      s[size_t(3 * c + k)] += truth;
    }
  }
}

double FBetaScore::result() const {
  const int64_t c = classes_;
  const std::vector<double>& s = state();
  const double eps = keras_epsilon, beta2 = beta_ * beta_;
  auto score = [&](double tp, double fp, double fn) {
    const double precision = tp / (tp + fp + eps), recall = tp / (tp + fn + eps);
    return precision * recall / (beta2 * precision + recall + eps) * (1 + beta2);
  };
  if (average_ == Average::micro) {
    double tp = 0, fp = 0, fn = 0;
    for (int64_t k = 0; k < c; ++k) {
      tp += s[size_t(k)];
      fp += s[size_t(c + k)];
      fn += s[size_t(2 * c + k)];
    }
    return score(tp, fp, fn);
  }
  double positives = 0;
  for (int64_t k = 0; k < c; ++k) positives += s[size_t(3 * c + k)];
  double result = 0;
  for (int64_t k = 0; k < c; ++k) {
    const double f = score(s[size_t(k)], s[size_t(c + k)], s[size_t(2 * c + k)]);
    result += average_ == Average::macro ? f / double(c) : f * s[size_t(3 * c + k)] / (positives + eps);
  }
  return result;
}

namespace {

using nlohmann::json;

/// Keras' loss functions that are also metrics, by the names compile accepts.
std::shared_ptr<losses::Loss> metric_loss(const std::string& name) {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> aliases = {
      {{"mae", "MAE", "mean_absolute_error", "MeanAbsoluteError"}, "mean_absolute_error"},
      {{"mse", "MSE", "mean_squared_error", "MeanSquaredError"}, "mean_squared_error"},
      {{"mape", "MAPE", "mean_absolute_percentage_error", "MeanAbsolutePercentageError"}, "mean_absolute_percentage_error"},
      {{"msle", "MSLE", "mean_squared_logarithmic_error", "MeanSquaredLogarithmicError"}, "mean_squared_logarithmic_error"},
      {{"log_cosh_error", "LogCoshError"}, "log_cosh"},
      {{"poisson", "Poisson"}, "poisson"},
      {{"kl_divergence", "KLDivergence"}, "kl_divergence"},
      {{"hinge", "Hinge"}, "hinge"},
      {{"squared_hinge", "SquaredHinge"}, "squared_hinge"},
      {{"categorical_hinge", "CategoricalHinge"}, "categorical_hinge"},
      {{"binary_crossentropy", "BinaryCrossentropy", "bce", "BCE"}, "binary_crossentropy"},
      {{"categorical_crossentropy", "CategoricalCrossentropy"}, "categorical_crossentropy"},
      {{"sparse_categorical_crossentropy", "SparseCategoricalCrossentropy"}, "sparse_categorical_crossentropy"},
  };
  for (const auto& [names, loss] : aliases) {
    if (std::find(names.begin(), names.end(), name) != names.end()) return losses::get(loss);
  }
  return nullptr;
}

const char* const supported_metrics =
    "accuracy, binary_accuracy, categorical_accuracy, sparse_categorical_accuracy, top_k_categorical_accuracy, "
    "sparse_top_k_categorical_accuracy, mae, mse, root_mean_squared_error, mape, msle, log_cosh_error, poisson, "
    "kl_divergence, hinge, squared_hinge, categorical_hinge, the crossentropies, auc, precision, recall, "
    "f1_score, f_beta_score";

std::unique_ptr<Metric> make(const std::string& name, ConfigReader& c, const Shape& y_true, const Shape& y_pred,
                             const std::string& reported) {
  const int64_t classes = y_pred[y_pred.rank() - 1];
  check_argument(name != "Accuracy", "metric class 'Accuracy' (exact equality of labels and predictions) is not "
                 "supported; name the metric 'accuracy' for Keras' choice of binary, categorical or sparse accuracy");
  if (name == "accuracy" || name == "acc") {
    if (classes == 1) return std::make_unique<BinaryAccuracy>(reported);
    bool sparse = y_true.rank() < y_pred.rank() || y_true[y_true.rank() - 1] == 1;
    if (sparse) return std::make_unique<SparseCategoricalAccuracy>(reported);
    return std::make_unique<CategoricalAccuracy>(reported);
  }
  if (name == "sparse_categorical_accuracy" || name == "SparseCategoricalAccuracy") {
    return std::make_unique<SparseCategoricalAccuracy>(reported);
  }
  if (name == "categorical_accuracy" || name == "CategoricalAccuracy") return std::make_unique<CategoricalAccuracy>(reported);
  if (name == "binary_accuracy" || name == "BinaryAccuracy") {
    return std::make_unique<BinaryAccuracy>(reported, c.take("threshold", 0.5));
  }
  if (name == "top_k_categorical_accuracy" || name == "TopKCategoricalAccuracy") {
    return std::make_unique<TopKCategoricalAccuracy>(reported, c.take("k", int64_t(5)), false);
  }
  if (name == "sparse_top_k_categorical_accuracy" || name == "SparseTopKCategoricalAccuracy") {
    c.allow_only("from_sorted_ids", {false}, "predictions are scores, not sorted class ids");
    return std::make_unique<TopKCategoricalAccuracy>(reported, c.take("k", int64_t(5)), true);
  }
  if (name == "root_mean_squared_error" || name == "RootMeanSquaredError") {
    return std::make_unique<LossMean>(reported, losses::get("mean_squared_error"), true);
  }
  if (std::shared_ptr<losses::Loss> loss = metric_loss(name)) {
    // A serialized loss metric carries its loss's arguments: Keras' defaults only.
    c.allow_only("from_logits", {false}, "the metric reads probabilities (from_logits=False)");
    c.allow_only("label_smoothing", {0, 0.0}, "no label smoothing in metrics");
    c.allow_only("axis", {-1}, "the class axis is the last");
    return std::make_unique<LossMean>(reported, loss);
  }
  if (name == "precision" || name == "Precision" || name == "recall" || name == "Recall") {
    c.allow_null("top_k");
    c.allow_null("class_id");
    const json thresholds = c.take<json>("thresholds", json(0.5));
    check_argument(thresholds.is_number() || (thresholds.is_array() && thresholds.size() == 1),
                   name + ": thresholds " + thresholds.dump() + " is not supported: Tenfold takes one threshold");
    const double threshold = thresholds.is_number() ? thresholds.get<double>() : thresholds.at(0).get<double>();
    const auto kind = name == "precision" || name == "Precision" ? ThresholdedCounts::Kind::precision
                                                                 : ThresholdedCounts::Kind::recall;
    return std::make_unique<ThresholdedCounts>(reported, kind, threshold);
  }
  if (name == "auc" || name == "AUC") {
    c.allow_only("multi_label", {false}, "one AUC over every element (multi_label=False)");
    c.allow_null("num_labels");
    c.allow_null("label_weights");
    c.allow_null("thresholds");
    const std::string curve = c.take<std::string>("curve", "ROC");
    const std::string summation = c.take<std::string>("summation_method", "interpolation");
    check_argument(curve == "ROC" || curve == "PR", "AUC: curve '" + curve + "' is not supported; use ROC or PR");
    check_argument(summation == "interpolation" || summation == "minoring" || summation == "majoring",
                   "AUC: summation_method '" + summation + "' is not supported");
    return std::make_unique<AUC>(reported, c.take("num_thresholds", int64_t(200)),
                                 curve == "ROC" ? AUC::Curve::roc : AUC::Curve::pr,
                                 summation == "interpolation" ? AUC::Summation::interpolation
                                 : summation == "minoring"    ? AUC::Summation::minoring
                                                              : AUC::Summation::majoring,
                                 c.take("from_logits", false));
  }
  if (name == "f1_score" || name == "F1Score" || name == "f_beta_score" || name == "FBetaScore") {
    const json average = c.take<json>("average", json(nullptr));
    check_argument(average == "micro" || average == "macro" || average == "weighted",
                   name + ": average " + average.dump() + " is not supported: with no average Keras gives one score "
                   "per class, which a log of one number per metric cannot hold; use 'micro', 'macro' or 'weighted'");
    const bool f1 = name == "f1_score" || name == "F1Score";
    const double beta = f1 ? 1.0 : c.take("beta", 1.0);
    if (f1) c.allow_only("beta", {1, 1.0}, "F1Score's beta is 1");
    const std::string a = average.get<std::string>();
    return std::make_unique<FBetaScore>(reported, classes,
                                        a == "micro"   ? FBetaScore::Average::micro
                                        : a == "macro" ? FBetaScore::Average::macro
                                                       : FBetaScore::Average::weighted,
                                        beta, c.take_optional<double>("threshold"));
  }
  throw Error(ErrorCode::invalid_argument, "metric '" + name + "' is not supported; use " + supported_metrics);
}

}  // namespace

std::string name_of(const nlohmann::json& metric) {
  if (metric.is_string()) return metric.get<std::string>();
  check_argument(metric.is_object() && metric.contains("class_name"),
                 "a metric must be a name or a serialized Keras metric, got " + metric.dump().substr(0, 200));
  const nlohmann::json config = metric.value("config", nlohmann::json::object());
  const nlohmann::json name = config.is_object() ? config.value("name", nlohmann::json(nullptr)) : nlohmann::json(nullptr);
  return name.is_string() ? name.get<std::string>() : metric.at("class_name").get<std::string>();
}

std::unique_ptr<Metric> get(const nlohmann::json& metric, const Shape& y_true, const Shape& y_pred,
                            const std::string& reported_as) {
  if (metric.is_string()) {
    const std::string name = metric.get<std::string>();
    const nlohmann::json none = nlohmann::json::object();
    ConfigReader reader(name, none);
    return make(name, reader, y_true, y_pred, reported_as.empty() ? name : reported_as);
  }
  check_argument(metric.is_object() && metric.contains("class_name"),
                 "a metric must be a name or a serialized Keras metric, got " + metric.dump().substr(0, 200));
  const std::string class_name = metric.at("class_name").get<std::string>();
  ConfigReader::require_keras_module(metric, "keras.metrics", "metric");
  const nlohmann::json config = metric.value("config", nlohmann::json::object());
  ConfigReader reader(class_name, config);
  const std::string name = reader.take<std::string>("name", class_name);
  reader.allow_only("dtype", {"float32"}, "metrics are computed in float32");
  std::unique_ptr<Metric> result = make(class_name, reader, y_true, y_pred, reported_as.empty() ? name : reported_as);
  reader.finish();
  return result;
}

}  // namespace tenfold::metrics
