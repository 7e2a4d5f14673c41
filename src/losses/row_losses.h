#pragma once
// Keras' losses over each row of [batch, classes] as a whole: KL divergence, categorical hinge,
// cosine similarity (axis -1).
#include "losses/loss.h"

namespace tenfold::losses {

/// A loss whose per-sample value and gradient come from one row of predictions and targets.
class RowLoss : public Loss {
 public:
  double compute(const Tensor& y_pred, const Tensor& y_true, bool pred_are_logits,
                 double mean_over, Tensor* gradient) const override;

 protected:
  /// The row's loss; writes its derivative in each p[c] to d (n values).
  virtual double row(const float* p, const float* t, int64_t n, double* d) const = 0;
};

/// sum t log(t / p), both clipped to [eps, 1].
class KLDivergence : public RowLoss {
 public:
  std::string name() const override { return "kl_divergence"; }
  std::string class_name() const override { return "KLDivergence"; }
 protected:
  double row(const float* p, const float* t, int64_t n, double* d) const override;
};

/// max(max((1 - t) p) - sum(t p) + 1, 0), one-hot targets.
class CategoricalHinge : public RowLoss {
 public:
  std::string name() const override { return "categorical_hinge"; }
  std::string class_name() const override { return "CategoricalHinge"; }
 protected:
  double row(const float* p, const float* t, int64_t n, double* d) const override;
};

/// -cos(y_true, y_pred): each row divided by max(its norm, eps).
class CosineSimilarity : public RowLoss {
 public:
  std::string name() const override { return "cosine_similarity"; }
  std::string class_name() const override { return "CosineSimilarity"; }
  nlohmann::json get_config() const override;
 protected:
  double row(const float* p, const float* t, int64_t n, double* d) const override;
};

}  // namespace tenfold::losses
