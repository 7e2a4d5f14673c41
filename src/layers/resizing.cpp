#include "layers/resizing.h"

#include "core/config_reader.h"
#include "core/error.h"
#include "core/random.h"

namespace tenfold::layers {

namespace {

class ResizeStep : public LayerStep {
 public:
  explicit ResizeStep(const kernels::ResizeGeometry& geometry) : geometry_(geometry) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    kernels::resize_images(input.data<float>(), output.data<float>(), geometry_);
  }

  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input, std::span<Tensor>,
                bool) override {
    if (grad_input) kernels::resize_images_backward(grad_output.data<float>(), grad_input->data<float>(), geometry_);
  }

 protected:
  kernels::ResizeGeometry geometry_;  // of the last forward, which backward follows
};

/// RandomCrop's: a window drawn per training call from a stream keyed as the random image
/// layers' (layers/random_image.cpp), else the inference geometry.
class RandomCropStep : public ResizeStep {
 public:
  RandomCropStep(const kernels::ResizeGeometry& inference, uint64_t key)
      : ResizeStep(inference), inference_(inference), key_(key) {}

  void forward(const Tensor& input, Tensor& output, bool training) override {
    geometry_ = inference_;
    if (training && inference_.in_height > inference_.out_height && inference_.in_width > inference_.out_width) {
      Random random(Random::nth(key_, ++calls_));
      geometry_.window_height = geometry_.out_height;
      geometry_.window_width = geometry_.out_width;
      geometry_.top = int64_t(random.below(uint64_t(geometry_.in_height - geometry_.out_height + 1)));
      geometry_.left = int64_t(random.below(uint64_t(geometry_.in_width - geometry_.out_width + 1)));
    }
    ResizeStep::forward(input, output, training);
  }

 private:
  kernels::ResizeGeometry inference_;
  uint64_t key_;
  uint64_t calls_ = 0;
};

/// Keras' crop_to_aspect_ratio window (and smart_resize's): the largest centred window of
/// the target's aspect ratio.
void centred_aspect_window(kernels::ResizeGeometry& g) {
  const double ratio = double(g.out_height) / double(g.out_width);
  g.window_height = std::max<int64_t>(std::min(g.in_height, int64_t(double(g.in_width) * ratio)), 1);
  g.window_width = std::max<int64_t>(std::min(g.in_width, int64_t(double(g.in_height) / ratio)), 1);
  g.top = (g.in_height - g.window_height) / 2;
  g.left = (g.in_width - g.window_width) / 2;
}

}  // namespace

Resizing::Resizing(int64_t height, int64_t width, kernels::Interpolation interpolation, bool crop_to_aspect_ratio,
                   const std::string& name)
    : Resizing(height, width, "resizing", name) {
  interpolation_ = interpolation;
  crop_to_aspect_ratio_ = crop_to_aspect_ratio;
}

Resizing::Resizing(int64_t height, int64_t width, const std::string& snake_name, const std::string& name)
    : Layer(snake_name, name), height_(height), width_(width) {
  // (A constructor cannot ask class_name(): the snake name says which layer this is.)
  check_argument(height > 0 && width > 0, snake_name + " '" + this->name() + "': height and width must be positive, got " +
                                              std::to_string(height) + "x" + std::to_string(width));
}

kernels::ResizeGeometry Resizing::geometry(const Shape& input_shape) const {
  check_argument(input_shape.rank() == 4, class_name() + " '" + name() +
                                              "' expects images (batch, height, width, channels), got " +
                                              input_shape.to_string(true));
  kernels::ResizeGeometry g{.batch = input_shape[0], .in_height = input_shape[1], .in_width = input_shape[2],
                            .channels = input_shape[3], .top = 0, .left = 0, .window_height = input_shape[1],
                            .window_width = input_shape[2], .out_height = height_, .out_width = width_,
                            .interpolation = interpolation_};
  if (crop_to_aspect_ratio_) centred_aspect_window(g);
  return g;
}

Shape Resizing::compute_output_shape(const Shape& input_shape) const {
  const kernels::ResizeGeometry g = geometry(input_shape);
  return {g.batch, g.out_height, g.out_width, g.channels};
}

std::unique_ptr<LayerStep> Resizing::compile(const Shape& input_shape, const CompileOptions&) {
  return std::make_unique<ResizeStep>(geometry(input_shape));
}

nlohmann::json Resizing::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["height"] = height_;
  config["width"] = width_;
  config["interpolation"] = kernels::interpolation_name(interpolation_);
  config["crop_to_aspect_ratio"] = crop_to_aspect_ratio_;
  config["pad_to_aspect_ratio"] = false;
  config["fill_mode"] = "constant";
  config["fill_value"] = 0.0;
  config["antialias"] = false;
  config["data_format"] = "channels_last";
  return config;
}

CenterCrop::CenterCrop(int64_t height, int64_t width, const std::string& name)
    : Resizing(height, width, "center_crop", name) {}

kernels::ResizeGeometry CenterCrop::geometry(const Shape& input_shape) const {
  kernels::ResizeGeometry g = Resizing::geometry(input_shape);
  if (g.in_height >= height() && g.in_width >= width()) {
    // A plain cut: a window of the output's size resizes to itself.
    g.window_height = height();
    g.window_width = width();
    g.top = (g.in_height - height()) / 2;
    g.left = (g.in_width - width()) / 2;
  } else {
    centred_aspect_window(g);
  }
  return g;
}

nlohmann::json CenterCrop::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["height"] = height();
  config["width"] = width();
  config["data_format"] = "channels_last";
  return config;
}

RandomCrop::RandomCrop(int64_t height, int64_t width, std::optional<uint64_t> seed, const std::string& name)
    : Resizing(height, width, "random_crop", name), seed_(seed) {}

kernels::ResizeGeometry RandomCrop::geometry(const Shape& input_shape) const {
  kernels::ResizeGeometry g = Resizing::geometry(input_shape);
  centred_aspect_window(g);
  return g;
}

std::unique_ptr<LayerStep> RandomCrop::compile(const Shape& input_shape, const CompileOptions& options) {
  const uint64_t key = options.stream_key(seed_, name(), input_shape[0]);
  return std::make_unique<RandomCropStep>(geometry(input_shape), key);
}

nlohmann::json RandomCrop::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["height"] = height();
  config["width"] = width();
  config["data_format"] = "channels_last";
  config["seed"] = json_or_null(seed_);
  return config;
}

}  // namespace tenfold::layers
