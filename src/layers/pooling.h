#pragma once
// keras.layers.MaxPooling2D and AveragePooling2D over NHWC inputs, and MaxPooling1D and
// AveragePooling1D over [batch, steps, channels] (the same kernels, on one row of steps).
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
  /// True for the 1D layers.
  bool one_dimensional() const { return one_dimensional_; }

 protected:
  /// The 1D layers': options over a window (1, pool_size), inputs [batch, steps, channels].
  Pooling2D(kernels::reference::PoolKind kind, const Pooling2DOptions& options, bool one_dimensional);

 private:
  kernels::reference::PoolKind kind_;
  Pooling2DOptions options_;
  std::array<int64_t, 2> strides_;
  kernels::Padding padding_;
  bool one_dimensional_ = false;
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

/// [batch, steps, channels] -> [batch, out_steps, channels]; strides default to pool_size.
class MaxPooling1D : public Pooling2D {
 public:
  explicit MaxPooling1D(int64_t pool_size = 2, std::optional<int64_t> strides = std::nullopt,
                        const std::string& padding = "valid", const std::string& name = "")
      : Pooling2D(kernels::reference::PoolKind::max,
                  {{1, pool_size}, std::array<int64_t, 2>{1, strides.value_or(pool_size)}, padding, name}, true) {}
};

class AveragePooling1D : public Pooling2D {
 public:
  explicit AveragePooling1D(int64_t pool_size = 2, std::optional<int64_t> strides = std::nullopt,
                            const std::string& padding = "valid", const std::string& name = "")
      : Pooling2D(kernels::reference::PoolKind::average,
                  {{1, pool_size}, std::array<int64_t, 2>{1, strides.value_or(pool_size)}, padding, name}, true) {}
};

}  // namespace tenfold::layers
