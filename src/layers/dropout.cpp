#include "layers/dropout.h"

#include <cstring>

#include "core/config_reader.h"
#include "core/error.h"
#include "core/random.h"
#include "kernels/bfloat16.h"

namespace tenfold::layers {

namespace {

/// The masks of one compiled step. Each forward call draws a fresh mask from its own key,
/// (layer seed, worker, replica, batch, call): nothing is shared between replicas' steps, and
/// a replica's masks do not depend on which thread compiled first.
class DropoutStep : public LayerStep {
 public:
  /// `noise_shape`: `shape`, or the shape of the draws shared along its axes of size 1.
  /// Activations in `dtype` (float32 or bfloat16; the mask is float32).
  DropoutStep(float rate, uint64_t key, const Shape& shape, const Shape& noise_shape, DType dtype)
      : dtype_(dtype),
        rate_(rate),
        keep_threshold_(uint32_t(double(rate) * double(1u << 24))),
        key_(key),
        mask_(shape),
        noise_index_(noise_shape == shape ? std::vector<int64_t>{} : broadcast_indices(shape, noise_shape)),
        noise_(noise_shape == shape ? Shape{0} : noise_shape) {}

  DType compute_dtype() const override { return dtype_; }

  void forward(const Tensor& input, Tensor& output, bool training) override {
    const int64_t count = input.num_elements();
    if (!training || rate_ == 0.0f) {
      if (input.raw_data() != output.raw_data()) std::memcpy(output.raw_data(), input.raw_data(), input.num_bytes());
      mask_active_ = false;
      return;
    }
    const uint64_t call_key = Random::nth(key_, ++calls_);
    float* mask = mask_.data<float>();
    if (noise_index_.empty()) {
      draw(call_key, mask, count);
    } else {
      float* noise = noise_.data<float>();
      draw(call_key, noise, noise_.num_elements());
      for (int64_t i = 0; i < count; ++i) mask[i] = noise[noise_index_[size_t(i)]];
    }
    apply_mask(input.raw_data(), output.raw_data(), count);
    mask_active_ = true;
  }

  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool) override {
    if (!grad_input) return;
    if (!mask_active_) {
      if (grad_input->raw_data() != grad_output.raw_data()) {
        std::memcpy(grad_input->raw_data(), grad_output.raw_data(), grad_output.num_bytes());
      }
      return;
    }
    apply_mask(grad_output.raw_data(), grad_input->raw_data(), grad_output.num_elements());
  }

 private:
  /// mask[i] = 1 / (1 - rate) or 0: kept when its 24 random bits, uniform in [0, 2^24), reach
  /// rate * 2^24 (the same test as uniform() >= rate). Counter-based, so the loop vectorizes.
  void draw(uint64_t call_key, float* mask, int64_t count) const {
    const float scale = 1.0f / (1.0f - rate_);
    for (int64_t i = 0; i < count; ++i) {
      uint32_t bits = uint32_t(Random::nth(call_key, uint64_t(i)) >> 40);
      mask[i] = bits >= keep_threshold_ ? scale : 0.0f;
    }
  }

  /// to[i] = from[i] * mask[i], in the step's dtype.
  void apply_mask(const void* from, void* to, int64_t count) const {
    const float* mask = mask_.data<float>();
    kernels::with_element_type(dtype_, [&](auto element) {
      using Element = decltype(element);
      const Element* in = static_cast<const Element*>(from);
      Element* out = static_cast<Element*>(to);
      for (int64_t i = 0; i < count; ++i) kernels::assign(out[i], kernels::as_float(in[i]) * mask[i]);
    });
  }

  DType dtype_;
  float rate_;
  uint32_t keep_threshold_;
  uint64_t key_;
  uint64_t calls_ = 0;
  Tensor mask_;
  std::vector<int64_t> noise_index_;  // per element, its draw; empty without a noise_shape
  Tensor noise_;                      // the draws, with a noise_shape
  bool mask_active_ = false;
};

}  // namespace

Dropout::Dropout(float rate, std::optional<uint64_t> seed, const std::string& name,
                 std::vector<std::optional<int64_t>> noise_shape)
    : Layer("dropout", name), rate_(rate), seed_(seed), noise_shape_(std::move(noise_shape)) {
  check_argument(rate >= 0.0f && rate < 1.0f,
                 "Dropout rate must be in [0, 1), got " + std::to_string(rate));
}

std::unique_ptr<LayerStep> Dropout::compile(const Shape& input_shape, const CompileOptions& options) {
  const uint64_t key = options.stream_key(seed_, name(), input_shape[0]);
  if (noise_shape_.empty()) return std::make_unique<DropoutStep>(rate_, key, input_shape, input_shape, options.compute_dtype);
  check_argument(int64_t(noise_shape_.size()) == input_shape.rank(),
                 "Dropout '" + name() + "': noise_shape has " + std::to_string(noise_shape_.size()) +
                     " entries for inputs of rank " + std::to_string(input_shape.rank()) + " (batch included)");
  Shape noise = input_shape;
  for (int64_t axis = 0; axis < input_shape.rank(); ++axis) {
    const int64_t dim = noise_shape_[size_t(axis)].value_or(input_shape[axis]);
    check_argument(dim == input_shape[axis] || dim == 1,
                   "Dropout '" + name() + "': noise_shape entry " + std::to_string(dim) + " for axis " +
                       std::to_string(axis) + " of size " + std::to_string(input_shape[axis]) +
                       " must be None, the size, or 1");
    noise[axis] = dim;
  }
  return std::make_unique<DropoutStep>(rate_, key, input_shape, noise, options.compute_dtype);
}

nlohmann::json Dropout::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["rate"] = rate_;
  config["seed"] = json_or_null(seed_);
  if (noise_shape_.empty()) {
    config["noise_shape"] = nullptr;
  } else {
    config["noise_shape"] = nlohmann::json::array();
    for (const std::optional<int64_t>& dim : noise_shape_) {
      config["noise_shape"].push_back(json_or_null(dim));
    }
  }
  return config;
}

}  // namespace tenfold::layers
