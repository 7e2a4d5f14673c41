#include "layers/pooling.h"

#include "core/error.h"
#include "kernels/onednn/pooling.h"

namespace tenfold::layers {

namespace {

using kernels::reference::PoolKind;

class Pooling2DStep : public LayerStep {
 public:
  Pooling2DStep(PoolKind kind, const kernels::WindowGeometry& g)
      : kernel_(kind, g), workspace_(allocate_aligned(kernel_.workspace_bytes())) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    kernel_.forward(input.data<float>(), output.data<float>(), workspace_.get());
  }

  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool) override {
    if (grad_input) {
      kernel_.backward(grad_output.data<float>(), grad_input->data<float>(), workspace_.get());
    }
  }

 private:
  kernels::onednn::PoolingKernel kernel_;
  std::shared_ptr<std::byte> workspace_;
};

const char* snake_name(PoolKind kind) {
  return kind == PoolKind::max ? "max_pooling2d" : "average_pooling2d";
}

}  // namespace

Pooling2D::Pooling2D(PoolKind kind, const Pooling2DOptions& options)
    : Layer(snake_name(kind), options.name),
      kind_(kind),
      options_(options),
      strides_(options.strides.value_or(options.pool_size)),
      padding_(kernels::parse_padding(options.padding)) {}

std::string Pooling2D::class_name() const {
  return kind_ == PoolKind::max ? "MaxPooling2D" : "AveragePooling2D";
}

kernels::WindowGeometry Pooling2D::geometry(const Shape& input_shape) const {
  check_argument(input_shape.rank() == 4,
                 class_name() + " '" + name() +
                     "' expects inputs (batch, height, width, channels), got " +
                     input_shape.to_string(true));
  return kernels::make_window_geometry(input_shape[0], input_shape[1], input_shape[2],
                                       input_shape[3], input_shape[3], options_.pool_size[0],
                                       options_.pool_size[1], strides_[0], strides_[1], padding_);
}

Shape Pooling2D::compute_output_shape(const Shape& input_shape) const {
  kernels::WindowGeometry g = geometry(input_shape);
  return {input_shape[0], g.out_height, g.out_width, input_shape[3]};
}

std::unique_ptr<LayerStep> Pooling2D::compile(const Shape& input_shape, const CompileOptions&) {
  return std::make_unique<Pooling2DStep>(kind_, geometry(input_shape));
}

nlohmann::json Pooling2D::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["pool_size"] = options_.pool_size;
  config["padding"] = options_.padding;
  config["strides"] = strides_;
  config["data_format"] = "channels_last";
  return config;
}

}  // namespace tenfold::layers
