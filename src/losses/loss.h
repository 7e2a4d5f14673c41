#pragma once
// Keras losses with reduction 'sum_over_batch_size'. A loss returns the sum of its per-sample
// values and writes the gradient already divided by the number of samples the mean is over,
// so replicas of one global batch can each do their share and the sums add up.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/tensor.h"

namespace tenfold::losses {

class Loss {
 public:
  virtual ~Loss() = default;
  /// Keras function name, e.g. "sparse_categorical_crossentropy".
  virtual std::string name() const = 0;
  /// Keras class name, e.g. "SparseCategoricalCrossentropy".
  virtual std::string class_name() const = 0;
  virtual nlohmann::json get_config() const;
  /// True for a crossentropy on probabilities: given a model ending in softmax, it takes the
  /// softmax's logits instead, the numerically stable path Keras takes.
  virtual bool fuses_softmax() const { return false; }

  /// Checks all targets of a data set once, before training, so an error names the sample.
  virtual void validate_targets(const Tensor& y_true, const Shape& y_pred_shape) const;

  /// y_pred [batch, ...]; y_true as the loss expects. When `pred_are_logits`, y_pred are the
  /// logits of a softmax (only if fuses_softmax()). Writes d(sum of losses / mean_over)/d y_pred
  /// into `gradient` (same shape as y_pred) unless null. Returns the sum of per-sample losses.
  virtual double compute(const Tensor& y_pred, const Tensor& y_true, bool pred_are_logits,
                         double mean_over, Tensor* gradient) const = 0;
};

/// By Keras' function or class name, or alias ("mse", "mae", "mape", "msle", "kld", ...),
/// with Keras' default arguments.
std::shared_ptr<Loss> get(const std::string& name);
/// From Keras' serialized loss, {"class_name": ..., "config": {...}}, read strictly: an argument
/// Tenfold does not implement is an error naming it.
std::shared_ptr<Loss> from_config(const nlohmann::json& loss);

/// The class of label row `row`, as Keras' class_weight reads it: an int32 label, a single
/// float rounded (binary targets), or the largest entry of a one-hot row.
int64_t class_of_label(const Tensor& labels, int64_t row);

/// Keras' labels for sparse losses may be int32 or float32; reads label `row` as an index.
int64_t sparse_label(const Tensor& y_true, int64_t row, int64_t classes);

}  // namespace tenfold::losses
