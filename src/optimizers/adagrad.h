#pragma once
// keras.optimizers.Adagrad: a += g^2 (from initial_accumulator_value);
// w -= lr * g / sqrt(a + epsilon).
#include "optimizers/optimizer.h"

namespace tenfold::optimizers {

class Adagrad : public Optimizer {
 public:
  explicit Adagrad(float learning_rate = 0.001f, float initial_accumulator_value = 0.1f,
                   float epsilon = 1e-7f)
      : Optimizer(learning_rate), initial_(initial_accumulator_value), epsilon_(epsilon) {}
  std::string class_name() const override { return "Adagrad"; }
  nlohmann::json get_config() const override;
  std::vector<std::vector<std::string>> slot_groups() const override { return {{"accumulator"}}; }

 protected:
  float initial_slot_value(int) const override { return initial_; }
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
  float initial_, epsilon_;
};

}  // namespace tenfold::optimizers
