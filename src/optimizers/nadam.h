#pragma once
// keras.optimizers.Nadam (Dozat 2016), Keras' update. With u_t = beta_1 * (1 - 0.5 * 0.96^t)
// and u_product the running product of the u_t:
//   m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2)
//   m_hat = u_{t+1} * m / (1 - u_product * u_{t+1}) + (1 - u_t) * g / (1 - u_product)
//   w -= lr * m_hat / (sqrt(v / (1 - beta_2^t)) + epsilon)
// Keras keeps u_product in the first variable's dtype; on bfloat16 variables every operation
// rounds to bfloat16, so the default beta_2 (0.999, 1.0 there) makes v / (1 - beta_2^t) 0 / 0 and
// every weight NaN: refused there, saying so.
#include "optimizers/optimizer.h"

namespace tenfold::optimizers {

class Nadam : public Optimizer {
 public:
  explicit Nadam(float learning_rate = 0.001f, float beta_1 = 0.9f, float beta_2 = 0.999f,
                 float epsilon = 1e-7f);
  std::string class_name() const override { return "Nadam"; }
  nlohmann::json get_config() const override;
  std::vector<std::vector<std::string>> slot_groups() const override { return {{"momentum", "velocity"}}; }

 protected:
  /// Keras keeps u_product as an optimizer variable after the slots.
  std::vector<std::pair<std::string, Tensor*>> keras_scalars() override { return {{"u_product", &u_product_}}; }
  void begin_step() override;
  void update(float* value, const float* gradient, std::span<float* const> slots,
              int64_t count) override;
  std::string bfloat16_refusal() const override;
  void update_bfloat16(float* value, const float* gradient, std::span<float* const> slots,
                       int64_t count) override;

 private:
  /// update() and update_bfloat16(): Keras' operations in Keras' order, in float32 (Number =
  /// float) or bfloat16 arithmetic (kernels::Bfloat16Number).
  template <typename Number>
  void update_in(float* value, const float* gradient, std::span<float* const> slots, int64_t count) const;

  float beta_1_, beta_2_, epsilon_;
  Tensor u_product_;  // scalar
};

}  // namespace tenfold::optimizers
