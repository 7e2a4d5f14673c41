#include "layers/upsampling.h"

#include <algorithm>

#include "core/error.h"

namespace tenfold::layers {

namespace {

class UpSamplingStep : public LayerStep {
 public:
  UpSamplingStep(const Shape& input, std::array<int64_t, 2> size)
      : batch_(input[0]), height_(input[1]), width_(input[2]), channels_(input[3]), size_(size) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    const float* x = input.data<float>();
    float* y = output.data<float>();
    for_each_pair([&](int64_t at_input, int64_t at_output) {
      std::copy(x + at_input, x + at_input + channels_, y + at_output);
    });
  }

  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool) override {
    if (!grad_input) return;
    const float* dy = grad_output.data<float>();
    float* dx = grad_input->data<float>();
    std::fill(dx, dx + grad_input->num_elements(), 0.0f);
    for_each_pair([&](int64_t at_input, int64_t at_output) {
      for (int64_t c = 0; c < channels_; ++c) dx[at_input + c] += dy[at_output + c];
    });
  }

 private:
  /// visit(input pixel offset, output pixel offset) for every output pixel.
  template <typename Visit>
  void for_each_pair(const Visit& visit) const {
    const int64_t out_height = height_ * size_[0], out_width = width_ * size_[1];
    for (int64_t n = 0; n < batch_; ++n)
      for (int64_t oh = 0; oh < out_height; ++oh)
        for (int64_t ow = 0; ow < out_width; ++ow) {
          visit(((n * height_ + oh / size_[0]) * width_ + ow / size_[1]) * channels_,
                ((n * out_height + oh) * out_width + ow) * channels_);
        }
  }

  int64_t batch_, height_, width_, channels_;
  std::array<int64_t, 2> size_;
};

}  // namespace

UpSampling2D::UpSampling2D(std::array<int64_t, 2> size, const std::string& name)
    : Layer("up_sampling2d", name), size_(size) {
  check_argument(size[0] > 0 && size[1] > 0, "UpSampling2D size must be positive");
}

Shape UpSampling2D::compute_output_shape(const Shape& input_shape) const {
  check_argument(input_shape.rank() == 4, "UpSampling2D '" + name() +
                                              "' expects inputs (batch, height, width, channels), got " +
                                              input_shape.to_string(true));
  return {input_shape[0], input_shape[1] * size_[0], input_shape[2] * size_[1], input_shape[3]};
}

std::unique_ptr<LayerStep> UpSampling2D::compile(const Shape& input_shape, const CompileOptions&) {
  compute_output_shape(input_shape);
  return std::make_unique<UpSamplingStep>(input_shape, size_);
}

nlohmann::json UpSampling2D::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["size"] = size_;
  config["data_format"] = "channels_last";
  config["interpolation"] = "nearest";
  return config;
}

}  // namespace tenfold::layers
