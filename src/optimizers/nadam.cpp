#include "optimizers/nadam.h"

#include <cmath>

namespace tenfold::optimizers {

Nadam::Nadam(float learning_rate, float beta_1, float beta_2, float epsilon)
    : Optimizer(learning_rate), beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon), u_product_(Shape{}) {
  u_product_.data<float>()[0] = 1.0f;
}

nlohmann::json Nadam::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["beta_1"] = beta_1_;
  config["beta_2"] = beta_2_;
  config["epsilon"] = epsilon_;
  return config;
}

void Nadam::begin_step() {
  const float step = float(update_steps() + 1);
  const float u_t = beta_1_ * (1.0f - 0.5f * std::pow(0.96f, step));
  const float u_next = beta_1_ * (1.0f - 0.5f * std::pow(0.96f, step + 1));
  float& u_product = u_product_.data<float>()[0];
  u_product *= u_t;
  momentum_scale_ = u_next / (1 - u_product * u_next);
  gradient_scale_ = (1 - u_t) / (1 - u_product);
  velocity_correction_ = 1 - std::pow(beta_2_, step);
}

void Nadam::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  float* m = slots[0];
  float* v = slots[1];
  const float lr = learning_rate(), one_minus_beta_1 = 1 - beta_1_, one_minus_beta_2 = 1 - beta_2_;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const float g = gradient[i];
    m[i] += (g - m[i]) * one_minus_beta_1;
    v[i] += (g * g - v[i]) * one_minus_beta_2;
    const float m_hat = momentum_scale_ * m[i] + gradient_scale_ * g;
    value[i] -= m_hat * lr / (std::sqrt(v[i] / velocity_correction_) + epsilon_);
  }
}

}  // namespace tenfold::optimizers
