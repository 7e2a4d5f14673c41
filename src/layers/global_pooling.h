#pragma once
// keras.layers.GlobalAveragePooling2D and GlobalMaxPooling2D: the mean or maximum of each
// channel over height and width, [batch, h, w, c] -> [batch, c] ([batch, 1, 1, c] with
// keepdims); GlobalAveragePooling1D and GlobalMaxPooling1D the same over the steps of
// [batch, steps, c].
#include "layers/layer.h"

namespace tenfold::layers {

class GlobalPooling2D : public Layer {
 public:
  /// `spatial_axes`: 2 for the 2D layers, 1 for the 1D ones.
  GlobalPooling2D(bool max, bool keepdims, const std::string& name, int64_t spatial_axes = 2);
  std::string class_name() const override;
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 private:
  bool max_, keepdims_;
  int64_t spatial_axes_;
};

struct GlobalAveragePooling2D : GlobalPooling2D {
  explicit GlobalAveragePooling2D(bool keepdims = false, const std::string& name = "")
      : GlobalPooling2D(false, keepdims, name) {}
};

struct GlobalMaxPooling2D : GlobalPooling2D {
  explicit GlobalMaxPooling2D(bool keepdims = false, const std::string& name = "")
      : GlobalPooling2D(true, keepdims, name) {}
};

struct GlobalAveragePooling1D : GlobalPooling2D {
  explicit GlobalAveragePooling1D(bool keepdims = false, const std::string& name = "")
      : GlobalPooling2D(false, keepdims, name, 1) {}
};

struct GlobalMaxPooling1D : GlobalPooling2D {
  explicit GlobalMaxPooling1D(bool keepdims = false, const std::string& name = "")
      : GlobalPooling2D(true, keepdims, name, 1) {}
};

}  // namespace tenfold::layers
