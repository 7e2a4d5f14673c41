#include "optimizers/adagrad.h"

#include <cmath>

namespace tenfold::optimizers {

nlohmann::json Adagrad::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["initial_accumulator_value"] = initial_;
  config["epsilon"] = epsilon_;
  return config;
}

void Adagrad::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  float* accumulator = slots[0];
  const float lr = learning_rate();
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const float g = gradient[i];
    accumulator[i] += g * g;
    value[i] -= lr * g / std::sqrt(accumulator[i] + epsilon_);
  }
}

}  // namespace tenfold::optimizers
