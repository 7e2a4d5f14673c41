#pragma once
// keras.losses.SparseCategoricalCrossentropy and CategoricalCrossentropy.
#include "losses/loss.h"

namespace tenfold::losses {

/// y_pred [batch, classes]; y_true [batch] or [batch, 1] of class indices.
class SparseCategoricalCrossentropy : public Loss {
 public:
  explicit SparseCategoricalCrossentropy(bool from_logits = false) : from_logits_(from_logits) {}
  std::string name() const override { return "sparse_categorical_crossentropy"; }
  std::string class_name() const override { return "SparseCategoricalCrossentropy"; }
  nlohmann::json get_config() const override;
  bool fuses_softmax() const override { return !from_logits_; }
  /// Every label in [0, classes).
  void validate_targets(const Tensor& y_true, const Shape& y_pred_shape) const override;
  double compute(const Tensor& y_pred, const Tensor& y_true, bool pred_are_logits,
                 double mean_over, Tensor* gradient) const override;

 private:
  bool from_logits_;
};

/// y_pred and y_true [batch, classes]; y_true one-hot (or any distribution).
class CategoricalCrossentropy : public Loss {
 public:
  /// label_smoothing moves each target toward 1 / classes.
  explicit CategoricalCrossentropy(bool from_logits = false, double label_smoothing = 0);
  std::string name() const override { return "categorical_crossentropy"; }
  std::string class_name() const override { return "CategoricalCrossentropy"; }
  nlohmann::json get_config() const override;
  bool fuses_softmax() const override { return !from_logits_; }
  double compute(const Tensor& y_pred, const Tensor& y_true, bool pred_are_logits,
                 double mean_over, Tensor* gradient) const override;

 private:
  bool from_logits_;
  double label_smoothing_;
};

}  // namespace tenfold::losses
