#pragma once
// keras.Input / InputLayer: declares the shape of one sample (no batch dimension).
#include "layers/layer.h"

namespace tenfold::layers {

class InputLayer : public Layer {
 public:
  explicit InputLayer(Shape sample_shape, const std::string& name = "");
  std::string class_name() const override { return "InputLayer"; }
  /// Shape of one sample, e.g. (28, 28, 1).
  const Shape& sample_shape() const { return sample_shape_; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 private:
  Shape sample_shape_;
};

/// keras.Input(shape=...)
std::shared_ptr<InputLayer> Input(Shape sample_shape, const std::string& name = "");

}  // namespace tenfold::layers
