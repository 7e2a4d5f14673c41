#pragma once
// keras.regularizers: a penalty on a trainable weight that Keras adds to the loss,
// l1 * sum |w| + l2 * sum w^2 (L1, L2, L1L2). Its gradient, l1 * sign(w) + 2 * l2 * w, is
// elementwise, so it is added in the weight's native layout (padding is zero and stays so).
#include <optional>
#include <span>

#include <nlohmann/json.hpp>

#include "core/tensor.h"

namespace tenfold {

class Variable;

struct Regularizer {
  double l1 = 0, l2 = 0;

  /// From a layer config's value: "l1", "l2", "l1l2" (as Keras reads them: L1(0.01), L2(0.01),
  /// L1L2(0, 0)), a class name, or a serialized {"class_name": "L1" | "L2" | "L1L2", "config":
  /// {...}}; null is none. Others
  /// (OrthogonalRegularizer, custom classes) are refused.
  static std::optional<Regularizer> from_config(const nlohmann::json& value);
  /// As Keras serializes it in a layer config.
  nlohmann::json get_config() const;
  /// l1 * sum |w| + l2 * sum w^2.
  double penalty(const Variable& weight) const;
  /// gradient += l1 * sign(w) + 2 * l2 * w.
  void add_gradient(const Variable& weight, Tensor& gradient) const;
};

/// The sum of the regularized weights' penalties: what Keras adds to the loss.
double regularization_penalty(std::span<Variable* const> weights);
/// Adds each regularized weight's penalty gradient to its gradient (gradients[i] of weights[i]).
void add_regularization_gradients(std::span<Variable* const> weights, std::span<Tensor> gradients);

}  // namespace tenfold
