#include "optimizers/rmsprop.h"

#include <cmath>

#include "kernels/bfloat16.h"

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

template <typename Number>
void RMSprop::update_in(float* value, const float* gradient, std::span<float* const> slots, int64_t count) const {
  using kernels::sqrt;
  const Number lr(learning_rate()), rho(rho_), one_minus_rho(1 - rho_), momentum(momentum_), epsilon(epsilon_);
  float* velocity = slots[0];
  float* accumulated = momentum_ > 0 ? slots[1] : nullptr;
  float* average = centered_ ? slots.back() : nullptr;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const Number g(gradient[i]);
    const Number v = rho * Number(velocity[i]) + one_minus_rho * (g * g);
    velocity[i] = float(v);
    Number denominator = v + epsilon;
    if (average) {
      const Number a = rho * Number(average[i]) + one_minus_rho * g;
      average[i] = float(a);
      denominator = v - a * a + epsilon;
    }
    const Number increment = lr * g / sqrt(denominator);
    if (accumulated) {
      const Number m = momentum * Number(accumulated[i]) + increment;
      accumulated[i] = float(m);
      value[i] = float(Number(value[i]) - m);
    } else {
      value[i] = float(Number(value[i]) - increment);
    }
  }
}

void RMSprop::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<float>(value, gradient, slots, count);
}

void RMSprop::update_bfloat16(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<kernels::Bfloat16Number>(value, gradient, slots, count);
}

}  // namespace tenfold::optimizers
