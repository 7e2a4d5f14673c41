#include "layers/prelu.h"

#include <algorithm>

#include "core/error.h"

namespace tenfold::layers {

namespace {

/// Walks a sample's elements with the index of the alpha each one uses (alpha broadcast along
/// the shared axes); every sample of the batch uses the same alphas.
class PReLUStep : public LayerStep {
 public:
  PReLUStep(const Shape& input_shape, const Shape& alpha_shape, const Variable* alpha)
      : batch_(input_shape[0]), alpha_(alpha), alpha_index_(broadcast_indices(input_shape.without_batch(), alpha_shape)) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    const float* x = input.data<float>();
    const float* alpha = alpha_->value().data<float>();
    float* y = output.data<float>();
    const int64_t per_sample = int64_t(alpha_index_.size());
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t i = 0; i < per_sample; ++i) {
        const float v = x[n * per_sample + i];
        y[n * per_sample + i] = v >= 0 ? v : alpha[alpha_index_[size_t(i)]] * v;
      }
    }
  }

  void backward(const Tensor& input, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor> weight_gradients, bool) override {
    const float* x = input.data<float>();
    const float* dy = grad_output.data<float>();
    const float* alpha = alpha_->value().data<float>();
    float* d_alpha = weight_gradients[0].data<float>();
    std::fill(d_alpha, d_alpha + weight_gradients[0].num_elements(), 0.0f);
    const int64_t per_sample = int64_t(alpha_index_.size());
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t i = 0; i < per_sample; ++i) {
        const int64_t e = n * per_sample + i;
        const int64_t a = alpha_index_[size_t(i)];
        if (x[e] < 0) d_alpha[a] += dy[e] * x[e];
        if (grad_input) grad_input->data<float>()[e] = x[e] >= 0 ? dy[e] : alpha[a] * dy[e];
      }
    }
  }

 private:
  int64_t batch_;
  const Variable* alpha_;
  std::vector<int64_t> alpha_index_;  // per element of a sample
};

}  // namespace

PReLU::PReLU(const Initializer& alpha_initializer, std::vector<int64_t> shared_axes, const std::string& name)
    : Layer("p_re_lu", name), alpha_initializer_(alpha_initializer), shared_axes_(std::move(shared_axes)) {}

Shape PReLU::alpha_shape(const Shape& input_shape) const {
  Shape shape = input_shape.without_batch();
  for (int64_t axis : shared_axes_) {
    check_argument(axis >= 1 && axis < input_shape.rank(),
                   "PReLU '" + name() + "': shared axis " + std::to_string(axis) + " is not a sample axis of inputs " +
                       input_shape.to_string(true));
    shape[axis - 1] = 1;
  }
  return shape;
}

void PReLU::build_weights(const Shape& input_shape, Random& random) {
  alpha_ = &add_weight("alpha", alpha_shape(input_shape), alpha_initializer_, random);
}

std::unique_ptr<LayerStep> PReLU::compile(const Shape& input_shape, const CompileOptions&) {
  return std::make_unique<PReLUStep>(input_shape, alpha_shape(input_shape), alpha_);
}

nlohmann::json PReLU::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["alpha_initializer"] = alpha_initializer_.get_config();
  config["alpha_regularizer"] = nullptr;
  config["alpha_constraint"] = nullptr;
  config["shared_axes"] = shared_axes_.empty() ? nlohmann::json(nullptr) : nlohmann::json(shared_axes_);
  return config;
}

}  // namespace tenfold::layers
