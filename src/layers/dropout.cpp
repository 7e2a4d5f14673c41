#include "layers/dropout.h"

#include <cstring>

#include "core/error.h"
#include "core/random.h"

namespace tenfold::layers {

namespace {

/// The masks of one compiled step. Each forward call draws a fresh mask from its own key,
/// (layer seed, worker, replica, batch, call): nothing is shared between replicas' steps, and
/// a replica's masks do not depend on which thread compiled first.
class DropoutStep : public LayerStep {
 public:
  DropoutStep(float rate, uint64_t key, const Shape& shape)
      : rate_(rate),
        keep_threshold_(uint32_t(double(rate) * double(1u << 24))),
        key_(key),
        mask_(shape) {}

  void forward(const Tensor& input, Tensor& output, bool training) override {
    const float* x = input.data<float>();
    float* y = output.data<float>();
    const int64_t count = input.num_elements();
    if (!training || rate_ == 0.0f) {
      if (x != y) std::memcpy(y, x, input.num_bytes());
      mask_active_ = false;
      return;
    }
    // Element i keeps when its 24 random bits, uniform in [0, 2^24), reach rate * 2^24: the
    // same test as uniform() >= rate. Counter-based, so the loop vectorizes.
    const uint64_t call_key = Random::mix(key_ + Random::increment * ++calls_);
    const float scale = 1.0f / (1.0f - rate_);
    float* mask = mask_.data<float>();
    for (int64_t i = 0; i < count; ++i) {
      uint32_t bits = uint32_t(Random::mix(call_key + Random::increment * uint64_t(i)) >> 40);
      mask[i] = bits >= keep_threshold_ ? scale : 0.0f;
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
    const int64_t count = grad_output.num_elements();
    if (!mask_active_) {
      if (dx != dy) std::memcpy(dx, dy, grad_output.num_bytes());
      return;
    }
    for (int64_t i = 0; i < count; ++i) dx[i] = dy[i] * mask[i];
  }

 private:
  float rate_;
  uint32_t keep_threshold_;
  uint64_t key_;
  uint64_t calls_ = 0;
  Tensor mask_;
  bool mask_active_ = false;
};

}  // namespace

Dropout::Dropout(float rate, std::optional<uint64_t> seed, const std::string& name)
    : Layer("dropout", name), rate_(rate), seed_(seed) {
  check_argument(rate >= 0.0f && rate < 1.0f,
                 "Dropout rate must be in [0, 1), got " + std::to_string(rate));
}

std::unique_ptr<LayerStep> Dropout::compile(const Shape& input_shape, const CompileOptions& options) {
  uint64_t key = seed_.value_or(0x5eed);
  for (uint64_t part : {uint64_t(options.worker), uint64_t(options.replica), uint64_t(input_shape[0])}) {
    key = Random::mix(key ^ Random::mix(part + Random::increment));
  }
  return std::make_unique<DropoutStep>(rate_, key, input_shape);
}

nlohmann::json Dropout::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["rate"] = rate_;
  config["seed"] = seed_ ? nlohmann::json(*seed_) : nlohmann::json(nullptr);
  config["noise_shape"] = nullptr;
  return config;
}

}  // namespace tenfold::layers
