#pragma once
// keras.optimizers.Lion (Chen et al. 2023): w -= lr * sign(beta_1 * m + (1 - beta_1) * g),
// then m = beta_2 * m + (1 - beta_2) * g.
#include "optimizers/optimizer.h"

namespace tenfold::optimizers {

class Lion : public Optimizer {
 public:
  explicit Lion(float learning_rate = 0.001f, float beta_1 = 0.9f, float beta_2 = 0.99f)
      : Optimizer(learning_rate), beta_1_(beta_1), beta_2_(beta_2) {}
  std::string class_name() const override { return "Lion"; }
  nlohmann::json get_config() const override;
  std::vector<std::vector<std::string>> slot_groups() const override { return {{"momentum"}}; }

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
  float beta_1_, beta_2_;
};

}  // namespace tenfold::optimizers
