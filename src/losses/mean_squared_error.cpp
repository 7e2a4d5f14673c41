#include "losses/mean_squared_error.h"

#include "core/error.h"

namespace tenfold::losses {

double MeanSquaredError::compute(const Tensor& y_pred, const Tensor& y_true, bool,
                                 double mean_over, Tensor* gradient) const {
  check_argument(y_true.num_elements() == y_pred.num_elements(),
                 "MeanSquaredError expects targets shaped like the predictions " +
                     y_pred.shape().to_string() + ", got " + y_true.shape().to_string());
  const Shape& shape = y_pred.shape();
  int64_t last = shape.rank() > 1 ? shape[shape.rank() - 1] : 1;
  const float* pred = y_pred.data<float>();
  const float* target = y_true.data<float>();
  float* grad = gradient ? gradient->data<float>() : nullptr;
  double total = 0;
  const int64_t count = y_pred.num_elements();
  for (int64_t i = 0; i < count; ++i) {
    double difference = double(pred[i]) - double(target[i]);
    total += difference * difference / double(last);
    if (grad) grad[i] = float(2.0 * difference / (double(last) * mean_over));
  }
  return total;
}

}  // namespace tenfold::losses
