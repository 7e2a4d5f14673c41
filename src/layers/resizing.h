#pragma once
// keras.layers.Resizing and CenterCrop: images [batch, height, width, channels] to a fixed
// size, the same in training and inference. Resizing resizes the whole image (or, with
// crop_to_aspect_ratio, its largest centred window of the target's aspect ratio) bilinearly
// or to the nearest pixel, as tf.image.resize without antialiasing. CenterCrop cuts the
// centred target window, or when the image is smaller than the target on either axis does
// what Keras does then: resizes its centred window of the target's aspect ratio. RandomCrop
// cuts a random window in training.
#include <optional>

#include "kernels/resize.h"
#include "layers/layer.h"

namespace tenfold::layers {

class Resizing : public Layer {
 public:
  Resizing(int64_t height, int64_t width, kernels::Interpolation interpolation = kernels::Interpolation::bilinear,
           bool crop_to_aspect_ratio = false, const std::string& name = "");
  std::string class_name() const override { return "Resizing"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 protected:
  /// CenterCrop's.
  Resizing(int64_t height, int64_t width, const std::string& snake_name, const std::string& name);
  /// The window of an input [batch, H, W, C] that becomes the output, and how.
  virtual kernels::ResizeGeometry geometry(const Shape& input_shape) const;
  int64_t height() const { return height_; }
  int64_t width() const { return width_; }

 private:
  int64_t height_, width_;
  kernels::Interpolation interpolation_ = kernels::Interpolation::bilinear;
  bool crop_to_aspect_ratio_ = false;
};

class CenterCrop : public Resizing {
 public:
  CenterCrop(int64_t height, int64_t width, const std::string& name = "");
  std::string class_name() const override { return "CenterCrop"; }
  nlohmann::json get_config() const override;

 protected:
  kernels::ResizeGeometry geometry(const Shape& input_shape) const override;
};

/// keras.layers.RandomCrop: in training, from an input larger than the target on both axes,
/// the target's window at a random offset, one per batch (as Keras, which crops a batch's
/// images alike), drawn per layer seed, worker, replica and step. Otherwise, and at inference,
/// what Keras documents (and tf.keras 2 did): the largest centred window of the target's
/// aspect ratio, resized bilinearly. Keras 3.15's code returns its input unchanged at
/// inference (keras-team/keras#21868), a shape no model with fixed shapes can take.
class RandomCrop : public Resizing {
 public:
  RandomCrop(int64_t height, int64_t width, std::optional<uint64_t> seed = std::nullopt, const std::string& name = "");
  std::string class_name() const override { return "RandomCrop"; }
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 protected:
  kernels::ResizeGeometry geometry(const Shape& input_shape) const override;

 private:
  std::optional<uint64_t> seed_;
};

}  // namespace tenfold::layers
