#pragma once
// keras.layers.UpSampling2D with interpolation="nearest": each pixel repeated size[0] x
// size[1] times. Backward sums each block's gradients.
#include <array>

#include "layers/layer.h"

namespace tenfold::layers {

class UpSampling2D : public Layer {
 public:
  explicit UpSampling2D(std::array<int64_t, 2> size = {2, 2}, const std::string& name = "");
  std::string class_name() const override { return "UpSampling2D"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 private:
  std::array<int64_t, 2> size_;
};

}  // namespace tenfold::layers
