#include "layers/padding.h"

#include <cstring>

#include "core/error.h"

namespace tenfold::layers {

namespace {

/// Copies the window [top, top + rows) x [left, left + columns) of each `small` image to or
/// from the `large` one: the whole work of padding (small -> large, the rest zeros) and of
/// cropping (large -> small).
class BorderCopy {
 public:
  BorderCopy(const Shape& large, const Shape& small, int64_t top, int64_t left)
      : batch_(large[0]), large_height_(large[1]), large_width_(large[2]), channels_(large[3]),
        rows_(small[1]), columns_(small[2]), top_(top), left_(left) {}

  void into_large(const float* small, float* large) const {
    std::memset(large, 0, size_t(batch_ * large_height_ * large_width_ * channels_) * sizeof(float));
    for_each_row([&](int64_t at_large, int64_t at_small) {
      std::memcpy(large + at_large, small + at_small, row_bytes());
    });
  }
  void from_large(const float* large, float* small) const {
    for_each_row([&](int64_t at_large, int64_t at_small) {
      std::memcpy(small + at_small, large + at_large, row_bytes());
    });
  }

 private:
  size_t row_bytes() const { return size_t(columns_ * channels_) * sizeof(float); }
  /// copy(offset in the large images, offset in the small ones) for each row of the window.
  template <typename Copy>
  void for_each_row(const Copy& copy) const {
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t r = 0; r < rows_; ++r) {
        copy(((n * large_height_ + top_ + r) * large_width_ + left_) * channels_, (n * rows_ + r) * columns_ * channels_);
      }
    }
  }

  int64_t batch_, large_height_, large_width_, channels_, rows_, columns_, top_, left_;
};

class PaddingStep : public LayerStep {
 public:
  PaddingStep(const Shape& input, const Shape& output, int64_t top, int64_t left)
      : copy_(output, input, top, left) {}
  void forward(const Tensor& input, Tensor& output, bool) override {
    copy_.into_large(input.data<float>(), output.data<float>());
  }
  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool) override {
    if (grad_input) copy_.from_large(grad_output.data<float>(), grad_input->data<float>());
  }

 private:
  BorderCopy copy_;
};

class CroppingStep : public LayerStep {
 public:
  CroppingStep(const Shape& input, const Shape& output, int64_t top, int64_t left)
      : copy_(input, output, top, left) {}
  void forward(const Tensor& input, Tensor& output, bool) override {
    copy_.from_large(input.data<float>(), output.data<float>());
  }
  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool) override {
    if (grad_input) copy_.into_large(grad_output.data<float>(), grad_input->data<float>());
  }

 private:
  BorderCopy copy_;
};

void check_images(const Layer& layer, const Shape& input_shape) {
  check_argument(input_shape.rank() == 4, layer.class_name() + " '" + layer.name() +
                                              "' expects inputs (batch, height, width, channels), got " +
                                              input_shape.to_string(true));
}

void check_borders(const std::string& what, const Borders& borders) {
  for (const auto& axis : borders) {
    for (int64_t size : axis) check_argument(size >= 0, what + " sizes must be >= 0");
  }
}

nlohmann::json borders_config(const Borders& borders) {
  return {{borders[0][0], borders[0][1]}, {borders[1][0], borders[1][1]}};
}

}  // namespace

ZeroPadding2D::ZeroPadding2D(Borders padding, const std::string& name)
    : Layer("zero_padding2d", name), padding_(padding) {
  check_borders("ZeroPadding2D padding", padding);
}

Shape ZeroPadding2D::compute_output_shape(const Shape& input_shape) const {
  check_images(*this, input_shape);
  return {input_shape[0], input_shape[1] + padding_[0][0] + padding_[0][1],
          input_shape[2] + padding_[1][0] + padding_[1][1], input_shape[3]};
}

std::unique_ptr<LayerStep> ZeroPadding2D::compile(const Shape& input_shape, const CompileOptions&) {
  return std::make_unique<PaddingStep>(input_shape, compute_output_shape(input_shape), padding_[0][0], padding_[1][0]);
}

nlohmann::json ZeroPadding2D::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["padding"] = borders_config(padding_);
  config["data_format"] = "channels_last";
  return config;
}

Cropping2D::Cropping2D(Borders cropping, const std::string& name)
    : Layer("cropping2d", name), cropping_(cropping) {
  check_borders("Cropping2D cropping", cropping);
}

Shape Cropping2D::compute_output_shape(const Shape& input_shape) const {
  check_images(*this, input_shape);
  Shape output = {input_shape[0], input_shape[1] - cropping_[0][0] - cropping_[0][1],
                  input_shape[2] - cropping_[1][0] - cropping_[1][1], input_shape[3]};
  check_argument(output[1] > 0 && output[2] > 0,
                 "Cropping2D '" + name() + "' crops all of its input " + input_shape.to_string(true) +
                     ": crop less");
  return output;
}

std::unique_ptr<LayerStep> Cropping2D::compile(const Shape& input_shape, const CompileOptions&) {
  return std::make_unique<CroppingStep>(input_shape, compute_output_shape(input_shape), cropping_[0][0], cropping_[1][0]);
}

nlohmann::json Cropping2D::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["cropping"] = borders_config(cropping_);
  config["data_format"] = "channels_last";
  return config;
}

}  // namespace tenfold::layers
