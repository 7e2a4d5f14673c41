#pragma once
// keras.layers.Dropout: in training, zeroes each input with probability `rate` and scales the
// rest by 1 / (1 - rate); at inference it passes inputs through.
#include <cstdint>
#include <optional>

#include "layers/layer.h"

namespace tenfold::layers {

/// Same shape in and out.
class Dropout : public Layer {
 public:
  explicit Dropout(float rate, std::optional<uint64_t> seed = std::nullopt,
                   const std::string& name = "");
  std::string class_name() const override { return "Dropout"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 private:
  float rate_;
  std::optional<uint64_t> seed_;
};

}  // namespace tenfold::layers
