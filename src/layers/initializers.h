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
  /// "glorot_uniform", "he_uniform", "zeros", "ones" (Keras' names, either case style).
  explicit Initializer(const std::string& name = "glorot_uniform");

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
