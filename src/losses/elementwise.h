#pragma once
// Keras' losses that are, per sample, the mean over the last axis of an elementwise term
// f(y_pred, y_true): mean squared / absolute / absolute percentage / squared logarithmic error,
// Huber, log-cosh, binary (focal) crossentropy, Poisson, hinge and squared hinge. Epsilons and
// clipping as Keras 3's TensorFlow backend (backend.epsilon() = 1e-7); terms in double.
#include <utility>

#include "losses/loss.h"

namespace tenfold::losses {

class ElementwiseLoss : public Loss {
 public:
  /// y_pred [batch, ...]; y_true of as many elements (float32 or int32).
  double compute(const Tensor& y_pred, const Tensor& y_true, bool pred_are_logits,
                 double mean_over, Tensor* gradient) const override;

 protected:
  /// The term f(p, t) and its derivative in p.
  virtual std::pair<double, double> term(double p, double t) const = 0;
  /// The target the term sees; `zero_one` says every target of the batch is 0 or 1.
  virtual double target(double t, bool /*zero_one*/) const { return t; }
};

class MeanSquaredError : public ElementwiseLoss {
 public:
  std::string name() const override { return "mean_squared_error"; }
  std::string class_name() const override { return "MeanSquaredError"; }
 protected:
  std::pair<double, double> term(double p, double t) const override;
};

class MeanAbsoluteError : public ElementwiseLoss {
 public:
  std::string name() const override { return "mean_absolute_error"; }
  std::string class_name() const override { return "MeanAbsoluteError"; }
 protected:
  std::pair<double, double> term(double p, double t) const override;
};

class MeanAbsolutePercentageError : public ElementwiseLoss {
 public:
  std::string name() const override { return "mean_absolute_percentage_error"; }
  std::string class_name() const override { return "MeanAbsolutePercentageError"; }
 protected:
  std::pair<double, double> term(double p, double t) const override;
};

class MeanSquaredLogarithmicError : public ElementwiseLoss {
 public:
  std::string name() const override { return "mean_squared_logarithmic_error"; }
  std::string class_name() const override { return "MeanSquaredLogarithmicError"; }
 protected:
  std::pair<double, double> term(double p, double t) const override;
};

class Huber : public ElementwiseLoss {
 public:
  explicit Huber(double delta = 1.0);
  std::string name() const override { return "huber_loss"; }
  std::string class_name() const override { return "Huber"; }
  nlohmann::json get_config() const override;
 protected:
  std::pair<double, double> term(double p, double t) const override;
 private:
  double delta_;
};

class LogCosh : public ElementwiseLoss {
 public:
  std::string name() const override { return "log_cosh"; }
  std::string class_name() const override { return "LogCosh"; }
 protected:
  std::pair<double, double> term(double p, double t) const override;
};

/// From probabilities (clipped to [eps, 1 - eps]) or, with from_logits, from logits; targets
/// smoothed toward 0.5 by label_smoothing.
class BinaryCrossentropy : public ElementwiseLoss {
 public:
  explicit BinaryCrossentropy(bool from_logits = false, double label_smoothing = 0);
  std::string name() const override { return "binary_crossentropy"; }
  std::string class_name() const override { return "BinaryCrossentropy"; }
  nlohmann::json get_config() const override;
 protected:
  std::pair<double, double> term(double p, double t) const override;
  double target(double t, bool zero_one) const override;
  bool from_logits_;
  double label_smoothing_;
};

/// (1 - p_t)^gamma times the binary crossentropy (Lin et al.), optionally weighted by alpha.
class BinaryFocalCrossentropy : public BinaryCrossentropy {
 public:
  BinaryFocalCrossentropy(bool apply_class_balancing = false, double alpha = 0.25, double gamma = 2.0,
                          bool from_logits = false, double label_smoothing = 0);
  std::string name() const override { return "binary_focal_crossentropy"; }
  std::string class_name() const override { return "BinaryFocalCrossentropy"; }
  nlohmann::json get_config() const override;
 protected:
  std::pair<double, double> term(double p, double t) const override;
 private:
  bool apply_class_balancing_;
  double alpha_, gamma_;
};

class Poisson : public ElementwiseLoss {
 public:
  std::string name() const override { return "poisson"; }
  std::string class_name() const override { return "Poisson"; }
 protected:
  std::pair<double, double> term(double p, double t) const override;
};

/// Targets -1 or 1; a batch of 0/1 targets is read as -1/1, as Keras does.
class Hinge : public ElementwiseLoss {
 public:
  std::string name() const override { return "hinge"; }
  std::string class_name() const override { return "Hinge"; }
 protected:
  std::pair<double, double> term(double p, double t) const override;
  double target(double t, bool zero_one) const override { return zero_one ? 2 * t - 1 : t; }
};

class SquaredHinge : public Hinge {
 public:
  std::string name() const override { return "squared_hinge"; }
  std::string class_name() const override { return "SquaredHinge"; }
 protected:
  std::pair<double, double> term(double p, double t) const override;
};

}  // namespace tenfold::losses
