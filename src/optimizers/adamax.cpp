#include "optimizers/adamax.h"

#include <algorithm>
#include <cmath>

#include "kernels/bfloat16.h"

namespace tenfold::optimizers {

nlohmann::json Adamax::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["beta_1"] = beta_1_;
  config["beta_2"] = beta_2_;
  config["epsilon"] = epsilon_;
  return config;
}

template <typename Number>
void Adamax::update_in(float* value, const float* gradient, std::span<float* const> slots, int64_t count) const {
  using kernels::abs, kernels::max, kernels::pow;
  const Number one(1.0f), lr(learning_rate()), beta_2(beta_2_), one_minus_beta_1(1 - beta_1_), epsilon(epsilon_);
  const Number correction = one - pow(Number(beta_1_), Number(float(update_steps() + 1)));
  float* m = slots[0];
  float* u = slots[1];
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const Number g(gradient[i]);
    const Number momentum = Number(m[i]) + (g - Number(m[i])) * one_minus_beta_1;
    const Number norm = max(beta_2 * Number(u[i]), abs(g));
    m[i] = float(momentum);
    u[i] = float(norm);
    value[i] = float(Number(value[i]) - lr * momentum / (correction * (norm + epsilon)));
  }
}

void Adamax::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<float>(value, gradient, slots, count);
}

void Adamax::update_bfloat16(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<kernels::Bfloat16Number>(value, gradient, slots, count);
}

}  // namespace tenfold::optimizers
