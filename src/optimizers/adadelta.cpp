#include "optimizers/adadelta.h"

#include <cmath>

namespace tenfold::optimizers {

nlohmann::json Adadelta::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["rho"] = rho_;
  config["epsilon"] = epsilon_;
  return config;
}

void Adadelta::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  float* accumulated_grad = slots[0];
  float* accumulated_delta = slots[1];
  const float lr = learning_rate();
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const float g = gradient[i];
    accumulated_grad[i] = rho_ * accumulated_grad[i] + (1 - rho_) * g * g;
    const float delta = -std::sqrt(accumulated_delta[i] + epsilon_) * g / std::sqrt(accumulated_grad[i] + epsilon_);
    accumulated_delta[i] = rho_ * accumulated_delta[i] + (1 - rho_) * delta * delta;
    value[i] += lr * delta;
  }
}

}  // namespace tenfold::optimizers
