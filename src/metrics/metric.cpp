#include "metrics/metric.h"

#include <algorithm>

#include "core/error.h"
#include "losses/loss.h"

namespace tenfold::metrics {

namespace {

int64_t argmax_row(const float* row, int64_t classes) {
  return std::max_element(row, row + classes) - row;
}

}  // namespace

void SparseCategoricalAccuracy::update_state(const Tensor& y_true, const Tensor& y_pred) {
  int64_t rows = y_pred.shape()[0], classes = y_pred.shape()[1];
  double correct = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t label = losses::sparse_label(y_true, r, classes);
    correct += argmax_row(y_pred.data<float>() + r * classes, classes) == label ? 1 : 0;
  }
  add(correct, double(rows));
}

void CategoricalAccuracy::update_state(const Tensor& y_true, const Tensor& y_pred) {
  int64_t rows = y_pred.shape()[0], classes = y_pred.shape()[1];
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
    float predicted = y_pred.data<float>()[i] > 0.5f ? 1.0f : 0.0f;
    correct += predicted == y_true.data<float>()[i] ? 1 : 0;
  }
  add(correct, double(count));
}

std::unique_ptr<Metric> get(const std::string& name, const Shape& y_true, const Shape& y_pred,
                            const std::string& reported_as) {
  const std::string reported = reported_as.empty() ? name : reported_as;
  if (name == "accuracy" || name == "acc") {
    if (y_pred[y_pred.rank() - 1] == 1) return std::make_unique<BinaryAccuracy>(reported);
    bool sparse = y_true.rank() < y_pred.rank() || y_true[y_true.rank() - 1] == 1;
    if (sparse) return std::make_unique<SparseCategoricalAccuracy>(reported);
    return std::make_unique<CategoricalAccuracy>(reported);
  }
  if (name == "sparse_categorical_accuracy") return std::make_unique<SparseCategoricalAccuracy>(reported);
  if (name == "categorical_accuracy") return std::make_unique<CategoricalAccuracy>(reported);
  if (name == "binary_accuracy") return std::make_unique<BinaryAccuracy>(reported);
  throw Error(ErrorCode::invalid_argument,
              "metric '" + name + "' is not supported; use accuracy, "
              "sparse_categorical_accuracy, categorical_accuracy or binary_accuracy");
}

}  // namespace tenfold::metrics
