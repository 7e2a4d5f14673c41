#pragma once
// keras.optimizers.Adamax, Keras' update:
//   m += (g - m) * (1 - beta_1);  u = max(beta_2 * u, |g|)
//   w -= lr * m / ((1 - beta_1^t) * (u + epsilon))
#include "optimizers/optimizer.h"

namespace tenfold::optimizers {

class Adamax : public Optimizer {
 public:
  explicit Adamax(float learning_rate = 0.001f, float beta_1 = 0.9f, float beta_2 = 0.999f,
                  float epsilon = 1e-7f)
      : Optimizer(learning_rate), beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon) {}
  std::string class_name() const override { return "Adamax"; }
  nlohmann::json get_config() const override;
  std::vector<std::vector<std::string>> slot_groups() const override { return {{"momentum", "norm"}}; }

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
  float beta_1_, beta_2_, epsilon_;
};

}  // namespace tenfold::optimizers
