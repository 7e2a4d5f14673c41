#include "optimizers/lion.h"

namespace tenfold::optimizers {

nlohmann::json Lion::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["beta_1"] = beta_1_;
  config["beta_2"] = beta_2_;
  return config;
}

void Lion::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  float* m = slots[0];
  const float lr = learning_rate();
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const float g = gradient[i];
    const float direction = m[i] * beta_1_ + g * (1 - beta_1_);
    value[i] -= lr * float((direction > 0) - (direction < 0));
    m[i] = m[i] * beta_2_ + g * (1 - beta_2_);
  }
}

}  // namespace tenfold::optimizers
