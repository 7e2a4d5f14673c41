#pragma once
// keras.losses.MeanSquaredError: per sample, the mean over the last axis of (y_pred - y_true)^2.
#include "losses/loss.h"

namespace tenfold::losses {

/// y_pred and y_true of the same shape [batch, ...].
class MeanSquaredError : public Loss {
 public:
  std::string name() const override { return "mean_squared_error"; }
  std::string class_name() const override { return "MeanSquaredError"; }
  double compute(const Tensor& y_pred, const Tensor& y_true, bool pred_are_logits,
                 double mean_over, Tensor* gradient) const override;
};

}  // namespace tenfold::losses
