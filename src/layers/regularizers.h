#pragma once
// keras.regularizers: a penalty Keras adds to the loss, l1 * sum |v| + l2 * sum v^2 (L1, L2,
// L1L2), on a trainable weight or (activity_regularizer) a layer's output. Its gradient,
// l1 * sign(v) + 2 * l2 * v, is elementwise, so a weight's is added in the weight's native
// layout (padding is zero and stays so).
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
  /// l1 * sum |v| + l2 * sum v^2.
  double penalty(std::span<const float> values) const;
  double penalty(const Variable& weight) const;
  /// gradient += scale * (l1 * sign(v) + 2 * l2 * v).
  void add_gradient(std::span<const float> values, float* gradient, double scale = 1) const;
  void add_gradient(const Variable& weight, Tensor& gradient) const;
};

/// The sum of the regularized weights' penalties: what Keras adds to the loss.
double regularization_penalty(std::span<Variable* const> weights);
/// Adds each regularized weight's penalty gradient to its gradient (gradients[i] of weights[i]).
void add_regularization_gradients(std::span<Variable* const> weights, std::span<Tensor> gradients);

}  // namespace tenfold
