#include "losses/crossentropy.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/keras_epsilon.h"

namespace tenfold::losses {

namespace {

struct Rows {
  int64_t count, classes;
};

Rows rows_of(const Tensor& y_pred, const char* loss) {
  check_argument(y_pred.shape().rank() == 2, std::string(loss) +
                                                 " expects predictions (batch, classes), got " +
                                                 y_pred.shape().to_string());
  return {y_pred.shape()[0], y_pred.shape()[1]};
}

/// Loss and gradient of one row given target probabilities `target(c)`, from logits:
/// loss = logsumexp(z) - sum_c t_c z_c (for sum_c t_c = 1), d/dz_c = softmax_c * sum(t) - t_c.
template <typename Target>
double logits_row(const float* z, int64_t classes, Target target, float scale, float* grad) {
  float max = *std::max_element(z, z + classes);
  double sum_exp = 0;
  for (int64_t c = 0; c < classes; ++c) sum_exp += std::exp(double(z[c] - max));
  double log_sum_exp = std::log(sum_exp) + max;
  double loss = 0, target_sum = 0;
  for (int64_t c = 0; c < classes; ++c) {
    loss += target(c) * (log_sum_exp - z[c]);
    target_sum += target(c);
  }
  if (grad) {
    for (int64_t c = 0; c < classes; ++c) {
      double softmax = std::exp(double(z[c]) - log_sum_exp);
      grad[c] = float((softmax * target_sum - target(c)) * scale);
    }
  }
  return loss;
}

}  // namespace

int64_t class_of_label(const Tensor& labels, int64_t row) {
  const int64_t rows = labels.shape()[0];
  const int64_t width = rows ? labels.num_elements() / rows : 0;
  if (labels.dtype() == DType::int32) return labels.data<int32_t>()[row * width];
  const float* values = labels.data<float>() + row * width;
  return width == 1 ? std::lround(values[0]) : int64_t(std::max_element(values, values + width) - values);
}

int64_t sparse_label(const Tensor& y_true, int64_t row, int64_t classes) {
  int64_t label = y_true.dtype() == DType::int32
                      ? int64_t(y_true.data<int32_t>()[row])
                      : int64_t(y_true.data<float>()[row]);
  if (label < 0 || label >= classes) {
    throw Error(ErrorCode::invalid_argument,
                "label " + std::to_string(label) + " at row " + std::to_string(row) +
                    " is outside [0, " + std::to_string(classes) +
                    "); the model's last layer must have one unit per class");
  }
  return label;
}

nlohmann::json SparseCategoricalCrossentropy::get_config() const {
  nlohmann::json config = Loss::get_config();
  config["from_logits"] = from_logits_;
  config["ignore_class"] = nullptr;
  return config;
}

void SparseCategoricalCrossentropy::validate_targets(const Tensor& y_true,
                                                     const Shape& y_pred_shape) const {
  int64_t classes = y_pred_shape[y_pred_shape.rank() - 1];
  const int64_t rows = y_true.num_elements();
  for (int64_t row = 0; row < rows; ++row) sparse_label(y_true, row, classes);
}

double SparseCategoricalCrossentropy::compute(const Tensor& y_pred, const Tensor& y_true,
                                              bool pred_are_logits, double mean_over,
                                              Tensor* gradient) const {
  Rows rows = rows_of(y_pred, "SparseCategoricalCrossentropy");
  check_argument(y_true.num_elements() == rows.count,
                 "SparseCategoricalCrossentropy expects one integer label per sample: " +
                     std::to_string(rows.count) + " predictions, " +
                     std::to_string(y_true.num_elements()) + " labels");
  const float* pred = y_pred.data<float>();
  float* grad = gradient ? gradient->data<float>() : nullptr;
  float scale = float(1.0 / mean_over);
  bool logits = from_logits_ || pred_are_logits;
  double total = 0;
  for (int64_t r = 0; r < rows.count; ++r) {
    int64_t label = sparse_label(y_true, r, rows.classes);
    const float* p = pred + r * rows.classes;
    float* g = grad ? grad + r * rows.classes : nullptr;
    if (logits) {
      total += logits_row(p, rows.classes, [&](int64_t c) { return c == label ? 1.0 : 0.0; },
                          scale, g);
      continue;
    }
    // As Keras on TensorFlow: clip, then a softmax crossentropy of log(p), which renormalises:
    // loss = -log(q_label / sum(q)), q = clip(p).
    double sum = 0;
    for (int64_t c = 0; c < rows.classes; ++c) sum += std::clamp(p[c], keras_epsilon, 1 - keras_epsilon);
    double q_label = std::clamp(p[label], keras_epsilon, 1 - keras_epsilon);
    total += -std::log(q_label / sum);
    if (g) {
      for (int64_t c = 0; c < rows.classes; ++c) {
        bool clipped = p[c] < keras_epsilon || p[c] > 1 - keras_epsilon;
        double q = std::clamp(p[c], keras_epsilon, 1 - keras_epsilon);
        double d = 1.0 / sum - (c == label ? 1.0 / q : 0.0);
        g[c] = clipped ? 0.0f : float(d * scale);
      }
    }
  }
  return total;
}

CategoricalCrossentropy::CategoricalCrossentropy(bool from_logits, double label_smoothing)
    : from_logits_(from_logits), label_smoothing_(label_smoothing) {
  check_argument(label_smoothing >= 0 && label_smoothing <= 1,
                 "label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));
}

nlohmann::json CategoricalCrossentropy::get_config() const {
  nlohmann::json config = Loss::get_config();
  config["from_logits"] = from_logits_;
  config["label_smoothing"] = label_smoothing_;
  config["axis"] = -1;
  return config;
}

double CategoricalCrossentropy::compute(const Tensor& y_pred, const Tensor& y_true,
                                        bool pred_are_logits, double mean_over,
                                        Tensor* gradient) const {
  Rows rows = rows_of(y_pred, "CategoricalCrossentropy");
  check_argument(y_true.shape() == y_pred.shape(),
                 "CategoricalCrossentropy expects one-hot labels shaped like the predictions " +
                     y_pred.shape().to_string() + ", got " + y_true.shape().to_string() +
                     "; for integer labels use SparseCategoricalCrossentropy");
  const float* pred = y_pred.data<float>();
  const float* target = y_true.data<float>();
  float* grad = gradient ? gradient->data<float>() : nullptr;
  float scale = float(1.0 / mean_over);
  bool logits = from_logits_ || pred_are_logits;
  double total = 0;
  std::vector<double> t(static_cast<size_t>(rows.classes));
  for (int64_t r = 0; r < rows.count; ++r) {
    const float* p = pred + r * rows.classes;
    for (int64_t c = 0; c < rows.classes; ++c) {
      t[size_t(c)] = target[r * rows.classes + c] * (1 - label_smoothing_) + label_smoothing_ / double(rows.classes);
    }
    float* g = grad ? grad + r * rows.classes : nullptr;
    if (logits) {
      total += logits_row(p, rows.classes, [&](int64_t c) { return t[size_t(c)]; }, scale, g);
      continue;
    }
    // As Keras: normalise to sum 1, clip, loss = -sum t log(q).
    double sum = 0;
    for (int64_t c = 0; c < rows.classes; ++c) sum += p[c];
    double unclipped_target_sum = 0;  // the gradient flows through unclipped classes only
    for (int64_t c = 0; c < rows.classes; ++c) {
      double normalised = p[c] / sum;
      double q = std::clamp(normalised, double(keras_epsilon), double(1 - keras_epsilon));
      total += -t[size_t(c)] * std::log(q);
      if (normalised == q) unclipped_target_sum += t[size_t(c)];
    }
    if (g) {
      // d/dp_c of -sum_k t_k log(p_k / S), through unclipped k only.
      for (int64_t c = 0; c < rows.classes; ++c) {
        double normalised = p[c] / sum;
        double q = std::clamp(normalised, double(keras_epsilon), double(1 - keras_epsilon));
        double direct = normalised == q ? -t[size_t(c)] / p[c] : 0.0;
        g[c] = float((direct + unclipped_target_sum / sum) * scale);
      }
    }
  }
  return total;
}

}  // namespace tenfold::losses
