#pragma once
// Weight initializers with Keras names and formulas. Values are drawn in Keras' layout.
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
  /// random_normal, random_uniform, truncated_normal, zeros, ones, constant.
  explicit Initializer(const std::string& name = "glorot_uniform");
  /// "" when `config` (a Keras initializer's config) asks for what Tenfold draws; otherwise
  /// what it asks for that Tenfold does not do (arguments other than Keras' defaults).
  static std::string unsupported_setting(const std::string& name, const nlohmann::json& config);

  /// Fills a tensor of Keras shape `value.shape()`; fans follow Keras (the receptive field
  /// times input and output channels for convolution kernels).
  void fill(Tensor& value, Random& random) const;
  /// {"class_name": "GlorotUniform", "config": {"seed": null}}
  nlohmann::json get_config() const;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

}  // namespace tenfold
