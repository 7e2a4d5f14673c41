#pragma once
// Weight initializers with Keras names, arguments and formulas. Values are drawn in Keras'
// layout, from Tenfold's seeded generator (a Keras seed is accepted and not used).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/random.h"
#include "core/tensor.h"

namespace tenfold {

class Initializer {
 public:
  /// Keras' built-in initializers by name, either case style ("he_normal", "HeNormal"), with
  /// Keras' default arguments: glorot, he and lecun uniform and normal, variance_scaling,
  /// random_normal, random_uniform, truncated_normal, orthogonal, identity, zeros, ones,
  /// constant. Implicit: layer options take names.
  Initializer(const std::string& name = "glorot_uniform");
  Initializer(const char* name) : Initializer(std::string(name)) {}
  /// A Keras initializer config, {"class_name": ..., "config": {...}}: a built-in with any of
  /// its arguments (the others at Keras' defaults). Unknown arguments are refused.
  static Initializer from_config(const nlohmann::json& config);
  /// Keras' Constant(value).
  static Initializer constant(double value);

  /// Fills a tensor of Keras shape `value.shape()`; fans follow Keras (the receptive field
  /// times input and output channels for convolution kernels).
  void fill(Tensor& value, Random& random) const;
  /// {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {...}}
  nlohmann::json get_config() const;
  const std::string& name() const { return name_; }

 private:
  double argument(const char* key) const { return arguments_.at(key).get<double>(); }
  void fill_orthogonal(Tensor& value, Random& random) const;

  std::string name_;
  nlohmann::json arguments_;  // Keras' arguments: its defaults, or the config's values
};

}  // namespace tenfold
