#include "optimizers/lion.h"

#include "kernels/bfloat16.h"

namespace tenfold::optimizers {

nlohmann::json Lion::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["beta_1"] = beta_1_;
  config["beta_2"] = beta_2_;
  return config;
}

template <typename Number>
void Lion::update_in(float* value, const float* gradient, std::span<float* const> slots, int64_t count) const {
  // Keras casts the betas to the variable's dtype before taking 1 - beta.
  const Number one(1.0f), lr(learning_rate()), beta_1(beta_1_), beta_2(beta_2_);
  const Number one_minus_beta_1 = one - beta_1, one_minus_beta_2 = one - beta_2;
  float* m = slots[0];
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const Number g(gradient[i]);
    const float direction = float(Number(m[i]) * beta_1 + g * one_minus_beta_1);
    value[i] = float(Number(value[i]) - lr * Number(float((direction > 0) - (direction < 0))));
    m[i] = float(Number(m[i]) * beta_2 + g * one_minus_beta_2);
  }
}

void Lion::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<float>(value, gradient, slots, count);
}

void Lion::update_bfloat16(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<kernels::Bfloat16Number>(value, gradient, slots, count);
}

}  // namespace tenfold::optimizers
