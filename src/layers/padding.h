#pragma once
// keras.layers.ZeroPadding2D and Cropping2D over NHWC inputs: rows and columns of zeros added
// around each image, or removed from its borders. Each one's backward is the other's forward.
#include <array>

#include "layers/layer.h"

namespace tenfold::layers {

/// ((top, bottom), (left, right)), as Keras normalises its padding and cropping arguments.
using Borders = std::array<std::array<int64_t, 2>, 2>;

class ZeroPadding2D : public Layer {
 public:
  explicit ZeroPadding2D(Borders padding = {{{1, 1}, {1, 1}}}, const std::string& name = "");
  std::string class_name() const override { return "ZeroPadding2D"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 private:
  Borders padding_;
};

class Cropping2D : public Layer {
 public:
  explicit Cropping2D(Borders cropping = {{{0, 0}, {0, 0}}}, const std::string& name = "");
  std::string class_name() const override { return "Cropping2D"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 private:
  Borders cropping_;
};

}  // namespace tenfold::layers
