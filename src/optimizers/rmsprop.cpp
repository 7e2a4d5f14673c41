#include "optimizers/rmsprop.h"

#include <cmath>

namespace tenfold::optimizers {

nlohmann::json RMSprop::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["rho"] = rho_;
  config["momentum"] = momentum_;
  config["epsilon"] = epsilon_;
  config["centered"] = centered_;
  return config;
}

std::vector<std::vector<std::string>> RMSprop::slot_groups() const {
  std::vector<std::vector<std::string>> groups = {{"velocity"}};
  if (momentum_ > 0) groups.push_back({"momentum"});
  if (centered_) groups.push_back({"average_gradient"});
  return groups;
}

void RMSprop::update(float* value, const float* gradient, std::span<float* const> slots,
                     int64_t count) {
  const float lr = learning_rate();
  float* velocity = slots[0];
  float* momentum = momentum_ > 0 ? slots[1] : nullptr;
  float* average = centered_ ? slots.back() : nullptr;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    float g = gradient[i];
    velocity[i] = rho_ * velocity[i] + (1 - rho_) * g * g;
    float denominator = velocity[i] + epsilon_;
    if (average) {
      average[i] = rho_ * average[i] + (1 - rho_) * g;
      denominator = velocity[i] - average[i] * average[i] + epsilon_;
    }
    float step = lr * g / std::sqrt(denominator);
    if (momentum) {
      momentum[i] = momentum_ * momentum[i] + step;
      value[i] -= momentum[i];
    } else {
      value[i] -= step;
    }
  }
}

}  // namespace tenfold::optimizers
