#include "layers/pooling.h"

#include "core/error.h"
#include "kernels/onednn/pooling.h"

namespace tenfold::layers {

namespace {

using kernels::reference::PoolKind;

class Pooling2DStep : public LayerStep {
 public:
  Pooling2DStep(PoolKind kind, const kernels::WindowGeometry& g, DType dtype)
      : dtype_(dtype), kernel_(kind, g, dtype), workspace_(allocate_aligned(kernel_.workspace_bytes())) {}

  DType compute_dtype() const override { return dtype_; }

  void forward(const Tensor& input, Tensor& output, bool) override {
    kernel_.forward(input.raw_data(), output.raw_data(), workspace_.get());
  }

  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool) override {
    if (grad_input) {
      kernel_.backward(grad_output.raw_data(), grad_input->raw_data(), workspace_.get());
    }
  }

 private:
  DType dtype_;
  kernels::onednn::PoolingKernel kernel_;
  std::shared_ptr<std::byte> workspace_;
};

std::string snake_name(PoolKind kind, bool one_dimensional) {
  return std::string(kind == PoolKind::max ? "max_pooling" : "average_pooling") + (one_dimensional ? "1d" : "2d");
}

}  // namespace

Pooling2D::Pooling2D(PoolKind kind, const Pooling2DOptions& options) : Pooling2D(kind, options, false) {}

Pooling2D::Pooling2D(PoolKind kind, const Pooling2DOptions& options, bool one_dimensional)
    : Layer(snake_name(kind, one_dimensional), options.name),
      kind_(kind),
      options_(options),
      strides_(options.strides.value_or(options.pool_size)),
      padding_(kernels::parse_padding(options.padding)),
      one_dimensional_(one_dimensional) {}

std::string Pooling2D::class_name() const {
  return std::string(kind_ == PoolKind::max ? "MaxPooling" : "AveragePooling") + (one_dimensional_ ? "1D" : "2D");
}

kernels::WindowGeometry Pooling2D::geometry(const Shape& input_shape) const {
  const int64_t rank = one_dimensional_ ? 3 : 4;
  check_argument(input_shape.rank() == rank,
                 class_name() + " '" + name() + "' expects inputs " +
                     (one_dimensional_ ? "(batch, steps, channels)" : "(batch, height, width, channels)") + ", got " +
                     input_shape.to_string(true));
  // A 1D layer's steps are one row of an image.
  const Shape image = one_dimensional_ ? Shape{input_shape[0], 1, input_shape[1], input_shape[2]} : input_shape;
  return kernels::make_window_geometry(image[0], image[1], image[2], image[3], image[3], options_.pool_size[0],
                                       options_.pool_size[1], strides_[0], strides_[1], padding_);
}

Shape Pooling2D::compute_output_shape(const Shape& input_shape) const {
  kernels::WindowGeometry g = geometry(input_shape);
  if (one_dimensional_) return {input_shape[0], g.out_width, g.out_channels};
  return {input_shape[0], g.out_height, g.out_width, g.out_channels};
}

std::unique_ptr<LayerStep> Pooling2D::compile(const Shape& input_shape, const CompileOptions& options) {
  return std::make_unique<Pooling2DStep>(kind_, geometry(input_shape), options.compute_dtype);
}

nlohmann::json Pooling2D::get_config() const {
  nlohmann::json config = Layer::get_config();
  if (one_dimensional_) {
    config["pool_size"] = {options_.pool_size[1]};
    config["strides"] = {strides_[1]};
  } else {
    config["pool_size"] = options_.pool_size;
    config["strides"] = strides_;
  }
  config["padding"] = options_.padding;
  config["data_format"] = "channels_last";
  return config;
}

}  // namespace tenfold::layers
