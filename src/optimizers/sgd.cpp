#include "optimizers/sgd.h"

namespace tenfold::optimizers {

nlohmann::json SGD::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["momentum"] = momentum_;
  config["nesterov"] = nesterov_;
  return config;
}

void SGD::update(float* value, const float* gradient, std::span<float* const> slots,
                 int64_t count) {
  float lr = learning_rate();
  if (momentum_ == 0.0f) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count; ++i) value[i] -= lr * gradient[i];
    return;
  }
  float* m = slots[0];
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    m[i] = momentum_ * m[i] - lr * gradient[i];
    value[i] += nesterov_ ? momentum_ * m[i] - lr * gradient[i] : m[i];
  }
}

}  // namespace tenfold::optimizers
