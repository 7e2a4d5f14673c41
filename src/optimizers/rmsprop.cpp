#include "optimizers/rmsprop.h"

#include <cmath>

namespace tenfold::optimizers {

nlohmann::json RMSprop::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["rho"] = rho_;
  config["momentum"] = momentum_;
  config["epsilon"] = epsilon_;
  config["centered"] = false;
  return config;
}

void RMSprop::update(float* value, const float* gradient, std::span<float* const> slots,
                     int64_t count) {
  float lr = learning_rate();
  float* velocity = slots[0];
  float* momentum = slots[1];
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    float g = gradient[i];
    velocity[i] = rho_ * velocity[i] + (1 - rho_) * g * g;
    float step = lr * g / std::sqrt(velocity[i] + epsilon_);
    if (momentum_ > 0.0f) {
      momentum[i] = momentum_ * momentum[i] + step;
      value[i] -= momentum[i];
    } else {
      value[i] -= step;
    }
  }
}

}  // namespace tenfold::optimizers
