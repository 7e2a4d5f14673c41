#include "layers/random_image.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "core/config_reader.h"
#include "core/error.h"

namespace tenfold::layers {

namespace {

/// Training: the layer's augmentation with a fresh stream of draws per call, keyed by the
/// layer's seed, worker, replica and batch size. Inference: the input as it is.
class RandomImageStep : public LayerStep {
 public:
  RandomImageStep(const RandomImageLayer& layer, const Shape& shape, uint64_t key)
      : layer_(layer), shape_(shape), key_(key), state_(layer.make_state(shape)) {}

  void forward(const Tensor& input, Tensor& output, bool training) override {
    augmented_ = training;
    if (!training) {
      if (input.raw_data() != output.raw_data()) std::memcpy(output.raw_data(), input.raw_data(), input.num_bytes());
      return;
    }
    Random random(Random::nth(key_, ++calls_));
    layer_.augment(input.data<float>(), output.data<float>(), shape_, random, *state_);
  }

  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input, std::span<Tensor>,
                bool) override {
    if (!grad_input) return;
    if (!augmented_) {
      if (grad_input->raw_data() != grad_output.raw_data()) {
        std::memcpy(grad_input->raw_data(), grad_output.raw_data(), grad_output.num_bytes());
      }
      return;
    }
    layer_.augment_backward(grad_output.data<float>(), grad_input->data<float>(), shape_, *state_);
  }

 private:
  const RandomImageLayer& layer_;
  Shape shape_;
  uint64_t key_;
  uint64_t calls_ = 0;
  std::unique_ptr<RandomImageLayer::State> state_;
  bool augmented_ = false;
};

}  // namespace

RandomImageLayer::RandomImageLayer(const std::string& snake_name, const std::string& name, std::optional<uint64_t> seed)
    : Layer(snake_name, name), seed_(seed) {}

Shape RandomImageLayer::compute_output_shape(const Shape& input_shape) const {
  check_argument(input_shape.rank() == 4, class_name() + " '" + name() +
                                              "' expects images (batch, height, width, channels), got " +
                                              input_shape.to_string(true));
  return input_shape;
}

std::unique_ptr<LayerStep> RandomImageLayer::compile(const Shape& input_shape, const CompileOptions& options) {
  compute_output_shape(input_shape);
  const uint64_t key = options.stream_key(seed_, name(), input_shape[0]);
  return std::make_unique<RandomImageStep>(*this, input_shape, key);
}

nlohmann::json RandomImageLayer::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["seed"] = json_or_null(seed_);
  config["data_format"] = "channels_last";
  return config;
}

// RandomFlip.

namespace {

struct FlipState : RandomImageLayer::State {
  std::vector<uint8_t> flipped;  // per image
};

/// dst = src mirrored along the axes chosen, per image flagged in `flipped` (else copied).
void flip_images(const float* src, float* dst, const Shape& shape, const std::vector<uint8_t>& flipped,
                 bool horizontal, bool vertical) {
  const int64_t height = shape[1], width = shape[2], channels = shape[3];
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < shape[0]; ++b) {
    const bool flip = flipped[size_t(b)] != 0;
    for (int64_t y = 0; y < height; ++y) {
      const int64_t from_y = flip && vertical ? height - 1 - y : y;
      for (int64_t x = 0; x < width; ++x) {
        const int64_t from_x = flip && horizontal ? width - 1 - x : x;
        std::memcpy(dst + ((b * height + y) * width + x) * channels,
                    src + ((b * height + from_y) * width + from_x) * channels, size_t(channels) * sizeof(float));
      }
    }
  }
}

}  // namespace

RandomFlip::RandomFlip(const std::string& mode, std::optional<uint64_t> seed, const std::string& name)
    : RandomImageLayer("random_flip", name, seed),
      mode_(mode),
      horizontal_(mode == "horizontal" || mode == "horizontal_and_vertical"),
      vertical_(mode == "vertical" || mode == "horizontal_and_vertical") {
  check_argument(horizontal_ || vertical_, "RandomFlip '" + this->name() + "': mode '" + mode +
                                               "' is not one of horizontal, vertical, horizontal_and_vertical");
}

nlohmann::json RandomFlip::get_config() const {
  nlohmann::json config = RandomImageLayer::get_config();
  config["mode"] = mode_;
  return config;
}

std::unique_ptr<RandomImageLayer::State> RandomFlip::make_state(const Shape& input_shape) const {
  auto state = std::make_unique<FlipState>();
  state->flipped.resize(size_t(input_shape[0]));
  return state;
}

void RandomFlip::augment(const float* src, float* dst, const Shape& shape, Random& random, State& state) const {
  auto& flipped = static_cast<FlipState&>(state).flipped;
  for (uint8_t& flip : flipped) flip = random.uniform() <= 0.5f;  // Keras: u <= 0.5 flips
  if (src == dst) throw Error(ErrorCode::internal, "RandomFlip needs separate input and output buffers");
  flip_images(src, dst, shape, flipped, horizontal_, vertical_);
}

void RandomFlip::augment_backward(const float* diff_dst, float* diff_src, const Shape& shape, const State& state) const {
  // A flip is its own inverse.
  flip_images(diff_dst, diff_src, shape, static_cast<const FlipState&>(state).flipped, horizontal_, vertical_);
}

// The affine layers.

std::pair<double, double> factor_range(const nlohmann::json& factor, const std::string& what) {
  if (factor.is_number()) return {-std::abs(factor.get<double>()), std::abs(factor.get<double>())};
  check_argument(factor.is_array() && factor.size() == 2 && factor[0].is_number() && factor[1].is_number(),
                 what + " must be a number or a pair of numbers, got " + factor.dump());
  const double a = factor[0].get<double>(), b = factor[1].get<double>();
  return {std::min(a, b), std::max(a, b)};
}

namespace {

struct AffineState : RandomImageLayer::State {
  std::vector<kernels::ProjectiveTransform> transforms;  // per image
};

double draw_in(Random& random, const std::pair<double, double>& range) {
  return range.first + (range.second - range.first) * double(random.uniform());
}

void check_within(const std::pair<double, double>& range, double low, double high, const std::string& what) {
  check_argument(range.first >= low && range.second <= high, what + " must lie in [" + std::to_string(low) + ", " +
                                                                 std::to_string(high) + "], got [" +
                                                                 std::to_string(range.first) + ", " +
                                                                 std::to_string(range.second) + "]");
}

}  // namespace

RandomAffine::RandomAffine(const std::string& snake_name, const std::string& name, std::optional<uint64_t> seed,
                           const kernels::ImageTransformOptions& options)
    : RandomImageLayer(snake_name, name, seed), options_(options) {}

nlohmann::json RandomAffine::get_config() const {
  nlohmann::json config = RandomImageLayer::get_config();
  config["fill_mode"] = kernels::fill_mode_name(options_.fill_mode);
  config["interpolation"] = kernels::interpolation_name(options_.interpolation);
  config["fill_value"] = options_.fill_value;
  return config;
}

std::unique_ptr<RandomImageLayer::State> RandomAffine::make_state(const Shape& input_shape) const {
  auto state = std::make_unique<AffineState>();
  state->transforms.resize(size_t(input_shape[0]));
  return state;
}

void RandomAffine::augment(const float* src, float* dst, const Shape& shape, Random& random, State& state) const {
  auto& transforms = static_cast<AffineState&>(state).transforms;
  for (auto& transform : transforms) transform = draw(random, shape[1], shape[2]);
  if (src == dst) throw Error(ErrorCode::internal, class_name() + " needs separate input and output buffers");
  kernels::transform_images(src, dst, shape[0], shape[1], shape[2], shape[3], transforms.data(), options_);
}

void RandomAffine::augment_backward(const float* diff_dst, float* diff_src, const Shape& shape,
                                    const State& state) const {
  kernels::transform_images_backward(diff_dst, diff_src, shape[0], shape[1], shape[2], shape[3],
                                     static_cast<const AffineState&>(state).transforms.data(), options_);
}

RandomTranslation::RandomTranslation(nlohmann::json height_factor, nlohmann::json width_factor,
                                     const kernels::ImageTransformOptions& options, std::optional<uint64_t> seed,
                                     const std::string& name)
    : RandomAffine("random_translation", name, seed, options),
      height_factor_(std::move(height_factor)),
      width_factor_(std::move(width_factor)),
      height_(factor_range(height_factor_, "RandomTranslation's height_factor")),
      width_(factor_range(width_factor_, "RandomTranslation's width_factor")) {
  check_within(height_, -1, 1, "RandomTranslation's height_factor");
  check_within(width_, -1, 1, "RandomTranslation's width_factor");
}

nlohmann::json RandomTranslation::get_config() const {
  nlohmann::json config = RandomAffine::get_config();
  config["height_factor"] = height_factor_;
  config["width_factor"] = width_factor_;
  return config;
}

kernels::ProjectiveTransform RandomTranslation::draw(Random& random, int64_t height, int64_t width) const {
  const float dy = float(draw_in(random, height_) * double(height));
  const float dx = float(draw_in(random, width_) * double(width));
  return {1, 0, -dx, 0, 1, -dy, 0, 0};
}

RandomRotation::RandomRotation(const nlohmann::json& factor, const kernels::ImageTransformOptions& options,
                               std::optional<uint64_t> seed, const std::string& name)
    : RandomAffine("random_rotation", name, seed, options), range_(factor_range(factor, "RandomRotation's factor")) {
  check_within(range_, -1, 1, "RandomRotation's factor");
}

nlohmann::json RandomRotation::get_config() const {
  nlohmann::json config = RandomAffine::get_config();
  config["factor"] = {range_.first, range_.second};  // Keras saves it normalised
  return config;
}

kernels::ProjectiveTransform RandomRotation::draw(Random& random, int64_t height, int64_t width) const {
  // Keras: degrees U(lower, upper) x 360, then radians in float32.
  const float degrees = float(draw_in(random, {range_.first * 360, range_.second * 360}));
  const float theta = degrees * float(std::numbers::pi / 180);
  const float c = std::cos(theta), s = std::sin(theta);
  const float cx = 0.5f * float(width - 1), cy = 0.5f * float(height - 1);
  return {c, -s, cx - cx * c + cy * s, s, c, cy - cx * s - cy * c, 0, 0};
}

RandomZoom::RandomZoom(nlohmann::json height_factor, nlohmann::json width_factor,
                       const kernels::ImageTransformOptions& options, std::optional<uint64_t> seed,
                       const std::string& name)
    : RandomAffine("random_zoom", name, seed, options),
      height_factor_(std::move(height_factor)),
      width_factor_(std::move(width_factor)),
      height_(factor_range(height_factor_, "RandomZoom's height_factor")) {
  check_within(height_, -1, 1, "RandomZoom's height_factor");
  check_argument(height_.first > -1, "RandomZoom's height_factor must be above -1 (a zoom of 0)");
  if (!width_factor_.is_null()) {
    width_ = factor_range(width_factor_, "RandomZoom's width_factor");
    check_within(*width_, -1, 1, "RandomZoom's width_factor");
    check_argument(width_->first > -1, "RandomZoom's width_factor must be above -1 (a zoom of 0)");
  }
}

nlohmann::json RandomZoom::get_config() const {
  nlohmann::json config = RandomAffine::get_config();
  config["height_factor"] = height_factor_;
  config["width_factor"] = width_factor_;
  return config;
}

kernels::ProjectiveTransform RandomZoom::draw(Random& random, int64_t height, int64_t width) const {
  const float zy = float(1 + draw_in(random, height_));
  const float zx = width_ ? float(1 + draw_in(random, *width_)) : zy;
  const float cx = 0.5f * float(width - 1), cy = 0.5f * float(height - 1);
  return {zx, 0, cx * (1 - zx), 0, zy, cy * (1 - zy), 0, 0};
}

// RandomContrast.

namespace {

struct ContrastState : RandomImageLayer::State {
  std::vector<float> contrast;  // per image
  std::vector<uint8_t> kept;    // per element: not clipped
};

std::pair<double, double> contrast_range(const nlohmann::json& factor) {
  // Keras 3.6+: a number f gives [0, f] (never lower contrast); a pair (a, b) gives [a, b],
  // sorted, for c in [1 - a, 1 + b].
  if (factor.is_number()) {
    const double f = factor.get<double>();
    check_argument(f >= 0 && f <= 1, "RandomContrast's factor must lie in [0, 1], got " + factor.dump());
    return {0.0, f};
  }
  check_argument(factor.is_array() && factor.size() == 2 && factor[0].is_number() && factor[1].is_number(),
                 "RandomContrast's factor must be a number or a pair of numbers, got " + factor.dump());
  const double a = std::min(factor[0].get<double>(), factor[1].get<double>());
  const double b = std::max(factor[0].get<double>(), factor[1].get<double>());
  check_argument(a <= 1 && b >= 0, "RandomContrast's factor (lower, upper) needs lower <= 1 and upper >= 0, got " +
                                       factor.dump());
  return {a, b};
}

}  // namespace

RandomContrast::RandomContrast(const nlohmann::json& factor, std::pair<double, double> value_range,
                               std::optional<uint64_t> seed, const std::string& name)
    : RandomImageLayer("random_contrast", name, seed), range_(contrast_range(factor)), value_range_(value_range) {
  check_argument(value_range.first < value_range.second, "RandomContrast's value_range must be (low, high) with low < high");
}

nlohmann::json RandomContrast::get_config() const {
  nlohmann::json config = RandomImageLayer::get_config();
  config["factor"] = {range_.first, range_.second};
  config["value_range"] = {value_range_.first, value_range_.second};
  return config;
}

std::unique_ptr<RandomImageLayer::State> RandomContrast::make_state(const Shape& input_shape) const {
  auto state = std::make_unique<ContrastState>();
  state->contrast.resize(size_t(input_shape[0]));
  state->kept.resize(size_t(input_shape.num_elements()));
  return state;
}

void RandomContrast::augment(const float* src, float* dst, const Shape& shape, Random& random, State& state) const {
  auto& s = static_cast<ContrastState&>(state);
  for (float& c : s.contrast) c = float(draw_in(random, {1 - range_.first, 1 + range_.second}));
  const int64_t pixels = shape[1] * shape[2], channels = shape[3];
  const float low = float(value_range_.first), high = float(value_range_.second);
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < shape[0]; ++b) {
    const float* x = src + b * pixels * channels;
    float* y = dst + b * pixels * channels;
    uint8_t* kept = s.kept.data() + b * pixels * channels;
    std::vector<double> mean(size_t(channels), 0.0);
    for (int64_t p = 0; p < pixels; ++p) {
      for (int64_t c = 0; c < channels; ++c) mean[size_t(c)] += x[p * channels + c];
    }
    for (double& m : mean) m /= double(pixels);
    const float contrast = s.contrast[size_t(b)];
    for (int64_t p = 0; p < pixels; ++p) {
      for (int64_t c = 0; c < channels; ++c) {
        const float m = float(mean[size_t(c)]);
        const float value = (x[p * channels + c] - m) * contrast + m;
        y[p * channels + c] = std::clamp(value, low, high);
        kept[p * channels + c] = value >= low && value <= high;
      }
    }
  }
}

void RandomContrast::augment_backward(const float* diff_dst, float* diff_src, const Shape& shape,
                                      const State& state) const {
  // y_j = (x_j - m) c + m with m the channel's mean: dx_i = c k_i g_i + (1 - c) / N sum_j k_j g_j,
  // k the elements not clipped.
  const auto& s = static_cast<const ContrastState&>(state);
  const int64_t pixels = shape[1] * shape[2], channels = shape[3];
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < shape[0]; ++b) {
    const float* g = diff_dst + b * pixels * channels;
    float* dx = diff_src + b * pixels * channels;
    const uint8_t* kept = s.kept.data() + b * pixels * channels;
    const float contrast = s.contrast[size_t(b)];
    std::vector<double> sum(size_t(channels), 0.0);
    for (int64_t p = 0; p < pixels; ++p) {
      for (int64_t c = 0; c < channels; ++c) sum[size_t(c)] += kept[p * channels + c] ? g[p * channels + c] : 0.0f;
    }
    for (int64_t p = 0; p < pixels; ++p) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t at = p * channels + c;
        dx[at] = (kept[at] ? contrast * g[at] : 0.0f) + float((1 - contrast) * sum[size_t(c)] / double(pixels));
      }
    }
  }
}

}  // namespace tenfold::layers
