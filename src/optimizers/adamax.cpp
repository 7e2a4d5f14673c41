#include "optimizers/adamax.h"

#include <algorithm>
#include <cmath>

namespace tenfold::optimizers {

nlohmann::json Adamax::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["beta_1"] = beta_1_;
  config["beta_2"] = beta_2_;
  config["epsilon"] = epsilon_;
  return config;
}

void Adamax::begin_step() { correction_ = 1 - std::pow(beta_1_, float(update_steps() + 1)); }

void Adamax::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  float* m = slots[0];
  float* u = slots[1];
  const float lr = learning_rate(), one_minus_beta_1 = 1 - beta_1_;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const float g = gradient[i];
    m[i] += (g - m[i]) * one_minus_beta_1;
    u[i] = std::max(beta_2_ * u[i], std::abs(g));
    value[i] -= lr * m[i] / (correction_ * (u[i] + epsilon_));
  }
}

}  // namespace tenfold::optimizers
