#include "losses/row_losses.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/keras_epsilon.h"

namespace tenfold::losses {

namespace {

}  // namespace

double RowLoss::compute(const Tensor& y_pred, const Tensor& y_true, bool, double mean_over,
                        Tensor* gradient) const {
  check_argument(y_true.shape() == y_pred.shape() && y_true.dtype() == DType::float32,
                 class_name() + " expects float targets shaped like the predictions " +
                     y_pred.shape().to_string() + ", got " + y_true.shape().to_string());
  const Shape& shape = y_pred.shape();
  const int64_t n = shape.rank() > 1 ? shape[shape.rank() - 1] : 1, rows = y_pred.num_elements() / n;
  std::vector<double> d(static_cast<size_t>(n));
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    total += row(y_pred.data<float>() + r * n, y_true.data<float>() + r * n, n, d.data());
    if (gradient) {
      float* g = gradient->data<float>() + r * n;
      for (int64_t c = 0; c < n; ++c) g[c] = float(d[size_t(c)] / mean_over);
    }
  }
  return total;
}

double KLDivergence::row(const float* p, const float* t, int64_t n, double* d) const {
  double total = 0;
  for (int64_t c = 0; c < n; ++c) {
    const double tc = std::clamp(double(t[c]), keras_epsilon_in_double, 1.0);
    const double pc = std::clamp(double(p[c]), keras_epsilon_in_double, 1.0);
    total += tc * std::log(tc / pc);
    d[c] = pc == double(p[c]) ? -tc / pc : 0.0;
  }
  return total;
}

double CategoricalHinge::row(const float* p, const float* t, int64_t n, double* d) const {
  double positive = 0, negative = -INFINITY;
  int64_t arg = 0;
  for (int64_t c = 0; c < n; ++c) {
    positive += double(t[c]) * p[c];
    const double other = (1 - double(t[c])) * p[c];
    if (other > negative) negative = other, arg = c;
  }
  const double loss = negative - positive + 1;
  for (int64_t c = 0; c < n; ++c) d[c] = loss > 0 ? -double(t[c]) + (c == arg ? 1 - double(t[c]) : 0) : 0;
  return std::max(loss, 0.0);
}

nlohmann::json CosineSimilarity::get_config() const {
  nlohmann::json config = Loss::get_config();
  config["axis"] = -1;
  return config;
}

double CosineSimilarity::row(const float* p, const float* t, int64_t n, double* d) const {
  double p_norm = 0, t_norm = 0, dot = 0;
  for (int64_t c = 0; c < n; ++c) {
    p_norm += double(p[c]) * p[c];
    t_norm += double(t[c]) * t[c];
    dot += double(p[c]) * t[c];
  }
  p_norm = std::max(std::sqrt(p_norm), keras_epsilon_in_double);
  t_norm = std::max(std::sqrt(t_norm), keras_epsilon_in_double);
  const double cosine = dot / (p_norm * t_norm);
  const bool scaled = p_norm > keras_epsilon_in_double;  // below eps the norm is a constant
  for (int64_t c = 0; c < n; ++c) {
    const double along = scaled ? cosine * p[c] / p_norm : 0.0;
    d[c] = -(double(t[c]) / t_norm - along) / p_norm;
  }
  return -cosine;
}

}  // namespace tenfold::losses
