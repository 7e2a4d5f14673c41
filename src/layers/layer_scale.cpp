#include "layers/layer_scale.h"

#include "core/error.h"
#include "kernels/column_sums.h"

namespace tenfold::layers {

namespace {

class LayerScaleStep : public LayerStep {
 public:
  LayerScaleStep(int64_t rows, int64_t features, const Variable* gamma)
      : rows_(rows), features_(features), gamma_(gamma), column_sums_(rows, features), sums_(size_t(features)) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    const float* x = input.data<float>();
    const float* gamma = gamma_->value().data<float>();
    float* y = output.data<float>();
    for (int64_t row = 0; row < rows_; ++row) {
      for (int64_t c = 0; c < features_; ++c) y[row * features_ + c] = x[row * features_ + c] * gamma[c];
    }
  }

  void backward(const Tensor& input, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor> weight_gradients, bool) override {
    const float* x = input.data<float>();
    const float* dy = grad_output.data<float>();
    const float* gamma = gamma_->value().data<float>();
    const int64_t features = features_;
    column_sums_.run(features, [&](int64_t row, double* partial) {
      for (int64_t c = 0; c < features; ++c) partial[c] += double(dy[row * features + c]) * x[row * features + c];
    }, sums_.data());
    float* diff_gamma = weight_gradients[0].data<float>();
    for (int64_t c = 0; c < features; ++c) diff_gamma[c] = float(sums_[size_t(c)]);
    if (!grad_input) return;
    float* dx = grad_input->data<float>();
    for (int64_t row = 0; row < rows_; ++row) {
      for (int64_t c = 0; c < features; ++c) dx[row * features + c] = dy[row * features + c] * gamma[c];
    }
  }

 private:
  int64_t rows_, features_;
  const Variable* gamma_;
  kernels::ChunkedColumnSums column_sums_;
  std::vector<double> sums_;
};

}  // namespace

LayerScale::LayerScale(double init_values, int64_t projection_dim, const std::string& name)
    : Layer("layer_scale", name), init_values_(init_values), projection_dim_(projection_dim) {
  check_argument(projection_dim > 0, "LayerScale projection_dim must be positive, got " +
                                         std::to_string(projection_dim));
}

Shape LayerScale::compute_output_shape(const Shape& input_shape) const {
  check_argument(input_shape.rank() >= 2 && input_shape[input_shape.rank() - 1] == projection_dim_,
                 "LayerScale '" + name() + "' scales " + std::to_string(projection_dim_) +
                     " features (projection_dim) but is called on " + input_shape.to_string(true));
  return input_shape;
}

void LayerScale::build_weights(const Shape& input_shape, Random& random) {
  compute_output_shape(input_shape);
  // Keras' LayerScale calls its weight gamma but gives add_weight no name: Keras names it
  // "variable", and so do files.
  gamma_ = &add_weight("variable", Shape{projection_dim_}, Initializer::constant(init_values_), random);
}

std::unique_ptr<LayerStep> LayerScale::compile(const Shape& input_shape, const CompileOptions&) {
  return std::make_unique<LayerScaleStep>(input_shape.num_elements() / projection_dim_, projection_dim_, gamma_);
}

nlohmann::json LayerScale::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["init_values"] = init_values_;
  config["projection_dim"] = projection_dim_;
  return config;
}

}  // namespace tenfold::layers
