#pragma once
// keras.layers.Flatten: a reshape of NHWC memory, in the (height, width, channels) order Keras
// flattens in, so it costs nothing.
#include "layers/layer.h"

namespace tenfold::layers {

/// [batch, d1, ..., dn] -> [batch, d1 * ... * dn]
class Flatten : public Layer {
 public:
  explicit Flatten(const std::string& name = "") : Layer("flatten", name) {}
  std::string class_name() const override { return "Flatten"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;
};

}  // namespace tenfold::layers
