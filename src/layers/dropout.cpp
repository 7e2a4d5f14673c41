#include "layers/dropout.h"

#include <cstring>

#include "core/error.h"
#include "core/random.h"

namespace tenfold::layers {

namespace {

class DropoutStep : public LayerStep {
 public:
  DropoutStep(float rate, uint64_t seed, const Shape& shape)
      : rate_(rate), random_(seed), mask_(shape) {}

  void forward(const Tensor& input, Tensor& output, bool training) override {
    const float* x = input.data<float>();
    float* y = output.data<float>();
    int64_t count = input.num_elements();
    if (!training || rate_ == 0.0f) {
      if (x != y) std::memcpy(y, x, input.num_bytes());
      mask_active_ = false;
      return;
    }
    float scale = 1.0f / (1.0f - rate_);
    float* mask = mask_.data<float>();
    for (int64_t i = 0; i < count; ++i) {
      mask[i] = random_.uniform() >= rate_ ? scale : 0.0f;
      y[i] = x[i] * mask[i];
    }
    mask_active_ = true;
  }

  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool) override {
    if (!grad_input) return;
    const float* dy = grad_output.data<float>();
    float* dx = grad_input->data<float>();
    const float* mask = mask_.data<float>();
    for (int64_t i = 0; i < grad_output.num_elements(); ++i) dx[i] = mask_active_ ? dy[i] * mask[i] : dy[i];
  }

 private:
  float rate_;
  Random random_;
  Tensor mask_;
  bool mask_active_ = false;
};

}  // namespace

Dropout::Dropout(float rate, std::optional<uint64_t> seed, const std::string& name)
    : Layer("dropout", name), rate_(rate), seed_(seed) {
  check_argument(rate >= 0.0f && rate < 1.0f,
                 "Dropout rate must be in [0, 1), got " + std::to_string(rate));
}

std::unique_ptr<LayerStep> Dropout::compile(const Shape& input_shape, bool) {
  uint64_t seed = seed_.value_or(0x5eed) * 1000003ULL + compiled_steps_++;
  return std::make_unique<DropoutStep>(rate_, seed, input_shape);
}

nlohmann::json Dropout::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["rate"] = rate_;
  config["seed"] = seed_ ? nlohmann::json(*seed_) : nlohmann::json(nullptr);
  config["noise_shape"] = nullptr;
  return config;
}

}  // namespace tenfold::layers
