#pragma once
// keras.constraints: a projection Keras applies to a trainable weight after every optimizer
// update. MaxNorm, MinMaxNorm and UnitNorm rescale w by the norms over `axis` of Keras' layout
// (Dense kernel (in, out), axis 0: each unit's incoming weights); NonNeg is max(w, 0).
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.h"

namespace tenfold {

class Variable;

struct Constraint {
  enum class Kind { max_norm, min_max_norm, unit_norm, non_neg };
  Kind kind = Kind::non_neg;
  double min_value = 0, max_value = 2, rate = 1;
  std::vector<int64_t> axes = {0};  // Keras' axis: one or several, negative from the end

  /// From a layer config's value: "max_norm", "min_max_norm", "unit_norm", "non_neg" (Keras'
  /// defaults) or a serialized {"class_name": "MaxNorm", ...}; null is none.
  static std::optional<Constraint> from_config(const nlohmann::json& value);
  /// As Keras serializes it in a layer config.
  nlohmann::json get_config() const;
  /// w = constraint(w).
  void apply(Variable& weight) const;
};

}  // namespace tenfold
