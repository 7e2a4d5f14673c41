#pragma once
// keras.optimizers.RMSprop: v = rho * v + (1 - rho) * g^2; centered, also a = rho * a +
// (1 - rho) * g and the denominator is v - a^2; step = lr * g / sqrt(denominator + epsilon);
// with momentum, m = momentum * m + step, w -= m.
#include "optimizers/optimizer.h"

namespace tenfold::optimizers {

class RMSprop : public Optimizer {
 public:
  explicit RMSprop(float learning_rate = 0.001f, float rho = 0.9f, float momentum = 0.0f,
                   float epsilon = 1e-7f, bool centered = false)
      : Optimizer(learning_rate), rho_(rho), momentum_(momentum), epsilon_(epsilon), centered_(centered) {}
  std::string class_name() const override { return "RMSprop"; }
  nlohmann::json get_config() const override;
  /// Keras builds all velocities, then all momentums (momentum > 0), then all average
  /// gradients (centered).
  std::vector<std::vector<std::string>> slot_groups() const override;

 protected:
  void update(float* value, const float* gradient, std::span<float* const> slots,
              int64_t count) override;
  std::string bfloat16_refusal() const override { return ""; }
  void update_bfloat16(float* value, const float* gradient, std::span<float* const> slots,
                       int64_t count) override;

 private:
  /// update() and update_bfloat16(): Keras' operations in Keras' order, in float32 (Number =
  /// float) or bfloat16 arithmetic (kernels::Bfloat16Number).
  template <typename Number>
  void update_in(float* value, const float* gradient, std::span<float* const> slots, int64_t count) const;
  float rho_, momentum_, epsilon_;
  bool centered_;
};

}  // namespace tenfold::optimizers
