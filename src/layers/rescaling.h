#pragma once
// keras.layers.Rescaling: x * scale + offset (e.g. 1/255 for images), and keras.layers.Identity.
#include "layers/layer.h"

namespace tenfold::layers {

class Rescaling : public Layer {
 public:
  explicit Rescaling(double scale, double offset = 0, const std::string& name = "");
  std::string class_name() const override { return "Rescaling"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 private:
  double scale_, offset_;  // as configured; computed in float as Keras does
};

/// The input, unchanged (a view: no copy).
class Identity : public Layer {
 public:
  explicit Identity(const std::string& name = "") : Layer("identity", name) {}
  std::string class_name() const override { return "Identity"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
};

}  // namespace tenfold::layers
