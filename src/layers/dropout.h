#pragma once
// keras.layers.Dropout: in training, zeroes each input with probability `rate` and scales the
// rest by 1 / (1 - rate); at inference it passes inputs through. With a noise_shape, one draw
// covers every axis of size 1 in it (noise_shape (None, 1, 1, 1) drops whole samples).
#include <cstdint>
#include <optional>
#include <vector>

#include "layers/layer.h"

namespace tenfold::layers {

/// Same shape in and out.
class Dropout : public Layer {
 public:
  /// noise_shape: empty, or one entry per input axis (batch included): nullopt (Keras' None)
  /// for the input's size, or 1 to share one draw along that axis.
  explicit Dropout(float rate, std::optional<uint64_t> seed = std::nullopt, const std::string& name = "",
                   std::vector<std::optional<int64_t>> noise_shape = {});
  std::string class_name() const override { return "Dropout"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 private:
  float rate_;
  std::optional<uint64_t> seed_;
  std::vector<std::optional<int64_t>> noise_shape_;
};

}  // namespace tenfold::layers
