#include "layers/activation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/config_reader.h"
#include "core/error.h"
#include "kernels/onednn/activation.h"

namespace tenfold::layers {

namespace {

class ActivationStep : public LayerStep {
 public:
  /// Computes in `dtype` where the kernel runs the activation in it, else in float32.
  ActivationStep(const kernels::Activation& activation, const Shape& shape, DType dtype)
      : dtype_(kernels::onednn::runs_in_bfloat16(activation) ? dtype : DType::float32),
        kernel_(activation, shape.num_elements() / shape[shape.rank() - 1], shape[shape.rank() - 1],
                kernels::onednn::data_type_of(dtype_)) {}

  DType compute_dtype() const override { return dtype_; }

  void forward(const Tensor& input, Tensor& output, bool) override {
    kernel_.forward(input.raw_data(), output.raw_data());
  }

  void backward(const Tensor& input, const Tensor& output, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool grad_is_for_logits) override {
    if (!grad_input) return;
    if (grad_is_for_logits) {  // the loss already differentiated through the softmax
      std::memcpy(grad_input->raw_data(), grad_output.raw_data(), grad_output.num_bytes());
      return;
    }
    kernel_.backward(input.raw_data(), output.raw_data(), grad_output.raw_data(), grad_input->raw_data());
  }

  bool ends_in_softmax() const override {
    return kernel_.activation().kind == kernels::Activation::softmax;
  }

 private:
  DType dtype_;
  kernels::onednn::ActivationKernel kernel_;
};

/// Softmax over the middle axis of data seen as [outer, n, inner] (any axis but the last:
/// the last runs on oneDNN's kernel). Plain loops, vectorized along `inner`.
class SoftmaxAxisStep : public LayerStep {
 public:
  SoftmaxAxisStep(int64_t outer, int64_t n, int64_t inner) : outer_(outer), n_(n), inner_(inner) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    const float* x = input.data<float>();
    float* y = output.data<float>();
#pragma omp parallel
    {
      std::vector<float> max(static_cast<size_t>(inner_)), sum(static_cast<size_t>(inner_));  // per thread
#pragma omp for schedule(static)
    for (int64_t o = 0; o < outer_; ++o) {
      const float* xo = x + o * n_ * inner_;
      float* yo = y + o * n_ * inner_;
      std::fill(max.begin(), max.end(), -INFINITY);
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (int64_t k = 0; k < n_; ++k) {
        for (int64_t i = 0; i < inner_; ++i) max[size_t(i)] = std::max(max[size_t(i)], xo[k * inner_ + i]);
      }
      for (int64_t k = 0; k < n_; ++k) {
        for (int64_t i = 0; i < inner_; ++i) {
          yo[k * inner_ + i] = std::exp(xo[k * inner_ + i] - max[size_t(i)]);
          sum[size_t(i)] += yo[k * inner_ + i];
        }
      }
      for (int64_t k = 0; k < n_; ++k) {
        for (int64_t i = 0; i < inner_; ++i) yo[k * inner_ + i] /= sum[size_t(i)];
      }
    }
    }
  }

  /// dx = y * (dy - sum over the axis of dy * y).
  void backward(const Tensor&, const Tensor& output, Tensor& grad_output, Tensor* grad_input, std::span<Tensor>,
                bool) override {
    if (!grad_input) return;
    const float* y = output.data<float>();
    const float* dy = grad_output.data<float>();
    float* dx = grad_input->data<float>();
#pragma omp parallel
    {
      std::vector<float> dot(static_cast<size_t>(inner_));  // per thread
#pragma omp for schedule(static)
    for (int64_t o = 0; o < outer_; ++o) {
      const int64_t base = o * n_ * inner_;
      std::fill(dot.begin(), dot.end(), 0.0f);
      for (int64_t k = 0; k < n_; ++k) {
        for (int64_t i = 0; i < inner_; ++i) dot[size_t(i)] += dy[base + k * inner_ + i] * y[base + k * inner_ + i];
      }
      for (int64_t k = 0; k < n_; ++k) {
        for (int64_t i = 0; i < inner_; ++i) {
          const int64_t at = base + k * inner_ + i;
          dx[at] = y[at] * (dy[at] - dot[size_t(i)]);
        }
      }
    }
    }
  }

 private:
  int64_t outer_, n_, inner_;
};

kernels::Activation relu(std::optional<double> max_value, double negative_slope) {
  kernels::Activation activation(kernels::Activation::relu);
  check_argument(negative_slope >= 0, "ReLU negative_slope must be >= 0, got " + std::to_string(negative_slope));
  check_argument(!max_value || *max_value > 0, "ReLU max_value must be positive");
  check_argument(!max_value || negative_slope == 0,
                 "ReLU with both max_value and negative_slope is not implemented; use one of them");
  activation.alpha = float(negative_slope);
  if (max_value) activation.max_value = float(*max_value);
  return activation;
}

kernels::Activation elu(double alpha) {
  kernels::Activation activation(kernels::Activation::elu);
  activation.alpha = float(alpha);
  return activation;
}

}  // namespace

bool Activation::fuses_as_post_op() const { return kernels::onednn::fusable_as_post_op(activation_); }

Activation::Activation(const std::string& activation, const std::string& name)
    : Activation(kernels::parse_activation(activation), "activation", name) {}

Activation::Activation(const kernels::Activation& activation, const std::string& snake_name,
                       const std::string& name)
    : Layer(snake_name, name), activation_(activation) {}

std::unique_ptr<LayerStep> Activation::compile(const Shape& input_shape, const CompileOptions& options) {
  return std::make_unique<ActivationStep>(activation_, input_shape, options.compute_dtype);
}

nlohmann::json Activation::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["activation"] = kernels::activation_name(activation_);
  return config;
}

ReLU::ReLU(std::optional<double> max_value, double negative_slope, const std::string& name)
    : Activation(relu(max_value, negative_slope), "re_lu", name),
      max_value_(max_value),
      negative_slope_(negative_slope) {}

nlohmann::json ReLU::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["max_value"] = json_or_null(max_value_);
  config["negative_slope"] = negative_slope_;
  config["threshold"] = 0.0;
  return config;
}

LeakyReLU::LeakyReLU(double negative_slope, const std::string& name)
    : Activation(relu(std::nullopt, negative_slope), "leaky_re_lu", name), negative_slope_(negative_slope) {}

nlohmann::json LeakyReLU::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["negative_slope"] = negative_slope_;
  return config;
}

ELU::ELU(double alpha, const std::string& name) : Activation(elu(alpha), "elu", name), alpha_(alpha) {}

nlohmann::json ELU::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["alpha"] = alpha_;
  return config;
}

Softmax::Softmax(int64_t axis, const std::string& name)
    : Activation(kernels::Activation::softmax, "softmax", name), axis_(axis) {}

std::unique_ptr<LayerStep> Softmax::compile(const Shape& input_shape, const CompileOptions& options) {
  const int64_t rank = input_shape.rank(), axis = axis_ < 0 ? axis_ + rank : axis_;
  check_argument(axis >= 1 && axis < rank, "Softmax '" + name() + "': axis " + std::to_string(axis_) +
                                               " is not an axis of its samples " + input_shape.to_string(true));
  if (axis == rank - 1) return Activation::compile(input_shape, options);
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= input_shape[a];
  for (int64_t a = axis + 1; a < rank; ++a) inner *= input_shape[a];
  return std::make_unique<SoftmaxAxisStep>(outer, input_shape[axis], inner);
}

nlohmann::json Softmax::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["axis"] = axis_;
  return config;
}

}  // namespace tenfold::layers
