#pragma once
// keras.layers.Reshape: the same samples seen with another shape (one dimension may be -1,
// inferred). Like Flatten, it costs nothing: the compiled step makes the output a view.
#include <vector>

#include "layers/layer.h"

namespace tenfold::layers {

class Reshape : public Layer {
 public:
  explicit Reshape(std::vector<int64_t> target_shape, const std::string& name = "");
  std::string class_name() const override { return "Reshape"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 private:
  std::vector<int64_t> target_shape_;
};

/// The step of a layer whose output is its input reshaped (Flatten, Reshape).
std::unique_ptr<LayerStep> reshape_step();

}  // namespace tenfold::layers
