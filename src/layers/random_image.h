#pragma once
// Keras' random image augmentation layers, active in training only (identity at inference),
// over [batch, height, width, channels]: RandomFlip, RandomTranslation, RandomRotation,
// RandomZoom and RandomContrast, with Keras' (TensorFlow's) transforms, fill modes and
// factor conventions. Draws are Tenfold's own (Keras' are TensorFlow's Philox stream),
// seeded per layer seed, worker, replica and step, so no two replicas augment alike.
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/random.h"
#include "kernels/image_transform.h"
#include "layers/layer.h"

namespace tenfold::layers {

/// What the random layers share: shapes, the seed, and a fresh stream of draws per call.
class RandomImageLayer : public Layer {
 public:
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

  /// Applies the layer to a batch [batch, height, width, channels] with draws from `random`;
  /// `state` (allocated per compiled step by make_state) keeps what backward needs.
  struct State {
    virtual ~State() = default;
  };
  virtual std::unique_ptr<State> make_state(const Shape& input_shape) const = 0;
  virtual void augment(const float* src, float* dst, const Shape& shape, Random& random, State& state) const = 0;
  virtual void augment_backward(const float* diff_dst, float* diff_src, const Shape& shape, const State& state) const = 0;

 protected:
  RandomImageLayer(const std::string& snake_name, const std::string& name, std::optional<uint64_t> seed);

 private:
  std::optional<uint64_t> seed_;
};

/// keras.layers.RandomFlip: each image, with probability 1/2, mirrored left-right
/// ("horizontal"), upside down ("vertical"), or both at once ("horizontal_and_vertical": one
/// draw drives both, as Keras 3.6+).
class RandomFlip : public RandomImageLayer {
 public:
  explicit RandomFlip(const std::string& mode = "horizontal_and_vertical", std::optional<uint64_t> seed = std::nullopt,
                      const std::string& name = "");
  std::string class_name() const override { return "RandomFlip"; }
  nlohmann::json get_config() const override;
  std::unique_ptr<State> make_state(const Shape& input_shape) const override;
  void augment(const float* src, float* dst, const Shape& shape, Random& random, State& state) const override;
  void augment_backward(const float* diff_dst, float* diff_src, const Shape& shape, const State& state) const override;

 private:
  std::string mode_;
  bool horizontal_, vertical_;
};

/// A factor range [lower, upper] from Keras' forms: a number f is [-|f|, |f|], a pair is
/// sorted.
std::pair<double, double> factor_range(const nlohmann::json& factor, const std::string& what);

/// The layers that move pixels by a projective transform per image, drawn per image.
class RandomAffine : public RandomImageLayer {
 public:
  std::unique_ptr<State> make_state(const Shape& input_shape) const override;
  void augment(const float* src, float* dst, const Shape& shape, Random& random, State& state) const override;
  void augment_backward(const float* diff_dst, float* diff_src, const Shape& shape, const State& state) const override;
  nlohmann::json get_config() const override;

 protected:
  RandomAffine(const std::string& snake_name, const std::string& name, std::optional<uint64_t> seed,
               const kernels::ImageTransformOptions& options);
  /// One image's transform for an image of height x width.
  virtual kernels::ProjectiveTransform draw(Random& random, int64_t height, int64_t width) const = 0;

 private:
  kernels::ImageTransformOptions options_;
};

/// keras.layers.RandomTranslation: shifts by U(height range) x height rows, then U(width
/// range) x width columns (fractional, interpolated); positive moves down and right.
class RandomTranslation : public RandomAffine {
 public:
  RandomTranslation(nlohmann::json height_factor, nlohmann::json width_factor,
                    const kernels::ImageTransformOptions& options = {}, std::optional<uint64_t> seed = std::nullopt,
                    const std::string& name = "");
  std::string class_name() const override { return "RandomTranslation"; }
  nlohmann::json get_config() const override;

 protected:
  kernels::ProjectiveTransform draw(Random& random, int64_t height, int64_t width) const override;

 private:
  nlohmann::json height_factor_, width_factor_;  // as given (Keras saves them so)
  std::pair<double, double> height_, width_;
};

/// keras.layers.RandomRotation: turns by U(range) x 360 degrees about the image centre,
/// counter-clockwise for positive angles.
class RandomRotation : public RandomAffine {
 public:
  RandomRotation(const nlohmann::json& factor, const kernels::ImageTransformOptions& options = {},
                 std::optional<uint64_t> seed = std::nullopt, const std::string& name = "");
  std::string class_name() const override { return "RandomRotation"; }
  nlohmann::json get_config() const override;

 protected:
  kernels::ProjectiveTransform draw(Random& random, int64_t height, int64_t width) const override;

 private:
  std::pair<double, double> range_;
};

/// keras.layers.RandomZoom: scales by z = 1 + U(range) about the image centre per axis (the
/// width as the height when width_factor is null); z > 1 zooms out.
class RandomZoom : public RandomAffine {
 public:
  RandomZoom(nlohmann::json height_factor, nlohmann::json width_factor = nullptr,
             const kernels::ImageTransformOptions& options = {}, std::optional<uint64_t> seed = std::nullopt,
             const std::string& name = "");
  std::string class_name() const override { return "RandomZoom"; }
  nlohmann::json get_config() const override;

 protected:
  kernels::ProjectiveTransform draw(Random& random, int64_t height, int64_t width) const override;

 private:
  nlohmann::json height_factor_, width_factor_;
  std::pair<double, double> height_;
  std::optional<std::pair<double, double>> width_;
};

/// keras.layers.RandomContrast: per image c ~ U(1 - lower, 1 + upper) (a number f is [0, f],
/// as Keras 3.6+), x = clip((x - mean) c + mean, value_range) with the mean per image and
/// channel.
class RandomContrast : public RandomImageLayer {
 public:
  RandomContrast(const nlohmann::json& factor, std::pair<double, double> value_range = {0, 255},
                 std::optional<uint64_t> seed = std::nullopt, const std::string& name = "");
  std::string class_name() const override { return "RandomContrast"; }
  nlohmann::json get_config() const override;
  std::unique_ptr<State> make_state(const Shape& input_shape) const override;
  void augment(const float* src, float* dst, const Shape& shape, Random& random, State& state) const override;
  void augment_backward(const float* diff_dst, float* diff_src, const Shape& shape, const State& state) const override;

 private:
  std::pair<double, double> range_;  // of c - 1: [-lower, upper]
  std::pair<double, double> value_range_;
};

}  // namespace tenfold::layers
