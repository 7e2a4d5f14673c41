#include "optimizers/adagrad.h"

#include <cmath>

#include "kernels/bfloat16.h"

namespace tenfold::optimizers {

nlohmann::json Adagrad::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["initial_accumulator_value"] = initial_;
  config["epsilon"] = epsilon_;
  return config;
}

template <typename Number>
void Adagrad::update_in(float* value, const float* gradient, std::span<float* const> slots, int64_t count) const {
  using kernels::sqrt;
  const Number lr(learning_rate()), epsilon(epsilon_);
  float* accumulator = slots[0];
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const Number g(gradient[i]);
    const Number sum = Number(accumulator[i]) + g * g;
    accumulator[i] = float(sum);
    value[i] = float(Number(value[i]) - lr * g / sqrt(sum + epsilon));
  }
}

void Adagrad::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<float>(value, gradient, slots, count);
}

void Adagrad::update_bfloat16(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<kernels::Bfloat16Number>(value, gradient, slots, count);
}

}  // namespace tenfold::optimizers
