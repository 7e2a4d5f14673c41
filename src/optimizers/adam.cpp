#include "optimizers/adam.h"

#include <algorithm>
#include <cmath>

namespace tenfold::optimizers {

nlohmann::json Adam::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["beta_1"] = beta_1_;
  config["beta_2"] = beta_2_;
  config["epsilon"] = epsilon_;
  config["amsgrad"] = amsgrad_;
  return config;
}

void Adam::begin_step() {
  float step = float(update_steps() + 1);
  float beta_1_power = std::pow(beta_1_, step);
  float beta_2_power = std::pow(beta_2_, step);
  alpha_ = learning_rate() * std::sqrt(1 - beta_2_power) / (1 - beta_1_power);
}

void Adam::update(float* value, const float* gradient, std::span<float* const> slots,
                  int64_t count) {
  float* m = slots[0];
  float* v = slots[1];
  const float one_minus_beta_1 = 1 - beta_1_, one_minus_beta_2 = 1 - beta_2_;
  if (amsgrad_) {
    float* v_hat = slots[2];
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count; ++i) {
      float g = gradient[i];
      m[i] += (g - m[i]) * one_minus_beta_1;
      v[i] += (g * g - v[i]) * one_minus_beta_2;
      v_hat[i] = std::max(v_hat[i], v[i]);
      value[i] -= alpha_ * m[i] / (std::sqrt(v_hat[i]) + epsilon_);
    }
    return;
  }
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    float g = gradient[i];
    m[i] += (g - m[i]) * one_minus_beta_1;
    v[i] += (g * g - v[i]) * one_minus_beta_2;
    value[i] -= alpha_ * m[i] / (std::sqrt(v[i]) + epsilon_);
  }
}

}  // namespace tenfold::optimizers
