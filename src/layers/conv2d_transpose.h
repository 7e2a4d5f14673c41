#pragma once
// keras.layers.Conv2DTranspose over NHWC inputs: the transpose of the Conv2D (same kernel size,
// strides and padding) that maps its output back to its input's shape. Output size: 'valid'
// (in - 1) * stride + kernel, 'same' in * stride. Kernel [KH, KW, filters, in] (Keras'),
// then bias and activation.
#include "layers/conv2d.h"

namespace tenfold::layers {

class Conv2DTranspose : public Layer {
 public:
  /// options.groups must be 1 and dilation_rate 1 (Keras' output_padding is refused by the
  /// config reader).
  explicit Conv2DTranspose(const Conv2DOptions& options);
  std::string class_name() const override { return "Conv2DTranspose"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 protected:
  void build_weights(const Shape& input_shape, Random& random) override;

 private:
  /// The convolution from this layer's output to its input.
  kernels::WindowGeometry mirrored_geometry(const Shape& input_shape) const;

  Conv2DOptions options_;
  std::shared_ptr<const WeightLayout> kernel_layout_;
};

}  // namespace tenfold::layers
