#include "losses/elementwise.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/keras_epsilon.h"
#include "kernels/reference/activation.h"

namespace tenfold::losses {

namespace {

double sign(double x) { return double((x > 0) - (x < 0)); }

double target_at(const Tensor& y_true, int64_t i) {
  return y_true.dtype() == DType::int32 ? double(y_true.data<int32_t>()[i]) : double(y_true.data<float>()[i]);
}

/// -(t log c + (1 - t) log(1 - c)) of the clipped probability, and its derivative in p.
std::pair<double, double> crossentropy_of_probability(double p, double t) {
  const double c = std::clamp(p, keras_epsilon_in_double, 1 - keras_epsilon_in_double);
  const double value = -(t * std::log(c) + (1 - t) * std::log(1 - c));
  return {value, c == p ? -(t / c - (1 - t) / (1 - c)) : 0.0};
}

}  // namespace

double ElementwiseLoss::compute(const Tensor& y_pred, const Tensor& y_true, bool, double mean_over,
                                Tensor* gradient) const {
  check_argument(y_true.num_elements() == y_pred.num_elements(),
                 class_name() + " expects targets shaped like the predictions " +
                     y_pred.shape().to_string() + ", got " + y_true.shape().to_string());
  const Shape& shape = y_pred.shape();
  const double last = double(shape.rank() > 1 ? shape[shape.rank() - 1] : 1);
  const int64_t count = y_pred.num_elements();
  bool zero_one = true;
  for (int64_t i = 0; i < count && zero_one; ++i) {
    const double t = target_at(y_true, i);
    zero_one = t == 0 || t == 1;
  }
  const float* pred = y_pred.data<float>();
  float* grad = gradient ? gradient->data<float>() : nullptr;
  double total = 0;
  for (int64_t i = 0; i < count; ++i) {
    auto [value, derivative] = term(double(pred[i]), target(target_at(y_true, i), zero_one));
    total += value / last;
    if (grad) grad[i] = float(derivative / (last * mean_over));
  }
  return total;
}

std::pair<double, double> MeanSquaredError::term(double p, double t) const {
  return {(p - t) * (p - t), 2 * (p - t)};
}

std::pair<double, double> MeanAbsoluteError::term(double p, double t) const {
  return {std::abs(p - t), sign(p - t)};
}

std::pair<double, double> MeanAbsolutePercentageError::term(double p, double t) const {
  const double denominator = std::max(std::abs(t), keras_epsilon_in_double);
  return {100 * std::abs(p - t) / denominator, 100 * sign(p - t) / denominator};
}

std::pair<double, double> MeanSquaredLogarithmicError::term(double p, double t) const {
  const double q = std::max(p, keras_epsilon_in_double);
  const double difference = std::log(q + 1) - std::log(std::max(t, keras_epsilon_in_double) + 1);
  return {difference * difference, q == p ? 2 * difference / (q + 1) : 0.0};
}

Huber::Huber(double delta) : delta_(delta) {
  check_argument(delta > 0, "Huber delta must be positive, got " + std::to_string(delta));
}

nlohmann::json Huber::get_config() const {
  nlohmann::json config = Loss::get_config();
  config["delta"] = delta_;
  return config;
}

std::pair<double, double> Huber::term(double p, double t) const {
  const double e = p - t;
  if (std::abs(e) <= delta_) return {0.5 * e * e, e};
  return {delta_ * std::abs(e) - 0.5 * delta_ * delta_, delta_ * sign(e)};
}

std::pair<double, double> LogCosh::term(double p, double t) const {
  const double e = p - t;  // log(cosh(e)) = e + softplus(-2e) - log(2), without overflow
  const double softplus = std::max(-2 * e, 0.0) + std::log1p(std::exp(-std::abs(2 * e)));
  return {e + softplus - std::log(2.0), std::tanh(e)};
}

BinaryCrossentropy::BinaryCrossentropy(bool from_logits, double label_smoothing)
    : from_logits_(from_logits), label_smoothing_(label_smoothing) {
  check_argument(label_smoothing >= 0 && label_smoothing <= 1,
                 "label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));
}

nlohmann::json BinaryCrossentropy::get_config() const {
  nlohmann::json config = Loss::get_config();
  config["from_logits"] = from_logits_;
  config["label_smoothing"] = label_smoothing_;
  config["axis"] = -1;
  return config;
}

double BinaryCrossentropy::target(double t, bool) const {
  return t * (1 - label_smoothing_) + 0.5 * label_smoothing_;
}

std::pair<double, double> BinaryCrossentropy::term(double p, double t) const {
  if (!from_logits_) return crossentropy_of_probability(p, t);
  // sigmoid_cross_entropy_with_logits: max(z, 0) - z t + log(1 + exp(-|z|))
  return {std::max(p, 0.0) - p * t + std::log1p(std::exp(-std::abs(p))), kernels::reference::sigmoid(p) - t};
}

BinaryFocalCrossentropy::BinaryFocalCrossentropy(bool apply_class_balancing, double alpha, double gamma,
                                                 bool from_logits, double label_smoothing)
    : BinaryCrossentropy(from_logits, label_smoothing),
      apply_class_balancing_(apply_class_balancing), alpha_(alpha), gamma_(gamma) {
  check_argument(gamma >= 0, "BinaryFocalCrossentropy gamma must be >= 0");
}

nlohmann::json BinaryFocalCrossentropy::get_config() const {
  nlohmann::json config = BinaryCrossentropy::get_config();
  config["apply_class_balancing"] = apply_class_balancing_;
  config["alpha"] = alpha_;
  config["gamma"] = gamma_;
  return config;
}

std::pair<double, double> BinaryFocalCrossentropy::term(double z, double t) const {
  // As Keras: the crossentropy of the clipped probability, weighted by (1 - p_t)^gamma of the
  // unclipped one; from logits, p = sigmoid(z) and the chain rule adds p (1 - p).
  const double p = from_logits_ ? kernels::reference::sigmoid(z) : z;
  auto [crossentropy, d_crossentropy] = crossentropy_of_probability(p, t);
  const double away = 1 - (t * p + (1 - t) * (1 - p));  // 1 - p_t
  const double weight = std::pow(away, gamma_);
  const double d_weight = gamma_ == 0 ? 0 : gamma_ * std::pow(away, gamma_ - 1) * (1 - 2 * t);
  const double balance = apply_class_balancing_ ? t * alpha_ + (1 - t) * (1 - alpha_) : 1;
  const double chain = from_logits_ ? p * (1 - p) : 1;
  return {balance * weight * crossentropy, balance * (d_weight * crossentropy + weight * d_crossentropy) * chain};
}

std::pair<double, double> Poisson::term(double p, double t) const {
  return {p - t * std::log(p + keras_epsilon_in_double), 1 - t / (p + keras_epsilon_in_double)};
}

std::pair<double, double> Hinge::term(double p, double t) const {
  const double margin = 1 - t * p;
  return {std::max(margin, 0.0), margin > 0 ? -t : 0.0};
}

std::pair<double, double> SquaredHinge::term(double p, double t) const {
  const double margin = std::max(1 - t * p, 0.0);
  return {margin * margin, -2 * t * margin};
}

}  // namespace tenfold::losses
