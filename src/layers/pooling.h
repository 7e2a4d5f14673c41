#pragma once
// keras.layers.MaxPooling2D and AveragePooling2D over NHWC inputs.
#include <array>
#include <optional>

#include "kernels/reference/pooling.h"
#include "kernels/window.h"
#include "layers/layer.h"

namespace tenfold::layers {

struct Pooling2DOptions {
  std::array<int64_t, 2> pool_size = {2, 2};
  /// Defaults to pool_size, as in Keras.
  std::optional<std::array<int64_t, 2>> strides;
  std::string padding = "valid";
  std::string name;
};

/// [batch, height, width, channels] -> [batch, out_height, out_width, channels]
class Pooling2D : public Layer {
 public:
  Pooling2D(kernels::reference::PoolKind kind, const Pooling2DOptions& options);
  std::string class_name() const override;
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;
  kernels::WindowGeometry geometry(const Shape& input_shape) const;
  kernels::reference::PoolKind kind() const { return kind_; }

 private:
  kernels::reference::PoolKind kind_;
  Pooling2DOptions options_;
  std::array<int64_t, 2> strides_;
  kernels::Padding padding_;
};

class MaxPooling2D : public Pooling2D {
 public:
  explicit MaxPooling2D(const Pooling2DOptions& options = {})
      : Pooling2D(kernels::reference::PoolKind::max, options) {}
};

class AveragePooling2D : public Pooling2D {
 public:
  explicit AveragePooling2D(const Pooling2DOptions& options = {})
      : Pooling2D(kernels::reference::PoolKind::average, options) {}
};

}  // namespace tenfold::layers
