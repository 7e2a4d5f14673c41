#include "optimizers/adadelta.h"

#include <cmath>

#include "kernels/bfloat16.h"

namespace tenfold::optimizers {

nlohmann::json Adadelta::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["rho"] = rho_;
  config["epsilon"] = epsilon_;
  return config;
}

template <typename Number>
void Adadelta::update_in(float* value, const float* gradient, std::span<float* const> slots, int64_t count) const {
  using kernels::sqrt;
  const Number lr(learning_rate()), rho(rho_), one_minus_rho(1 - rho_), epsilon(epsilon_), zero(0.0f);
  float* accumulated_grad = slots[0];
  float* accumulated_delta = slots[1];
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const Number g(gradient[i]);
    const Number grad_average = rho * Number(accumulated_grad[i]) + one_minus_rho * (g * g);
    accumulated_grad[i] = float(grad_average);
    const Number delta = zero - sqrt(Number(accumulated_delta[i]) + epsilon) * g / sqrt(grad_average + epsilon);
    accumulated_delta[i] = float(rho * Number(accumulated_delta[i]) + one_minus_rho * (delta * delta));
    value[i] = float(Number(value[i]) + lr * delta);
  }
}

void Adadelta::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<float>(value, gradient, slots, count);
}

void Adadelta::update_bfloat16(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<kernels::Bfloat16Number>(value, gradient, slots, count);
}

}  // namespace tenfold::optimizers
