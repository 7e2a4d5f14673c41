#include "optimizers/adam.h"

#include <type_traits>

#include "kernels/bfloat16.h"

namespace tenfold::optimizers {

nlohmann::json Adam::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["beta_1"] = beta_1_;
  config["beta_2"] = beta_2_;
  config["epsilon"] = epsilon_;
  config["amsgrad"] = amsgrad_;
  return config;
}

template <typename Number>
void Adam::update_in(float* value, const float* gradient, std::span<float* const> slots, int64_t count) const {
  using kernels::max, kernels::pow, kernels::sqrt;  // float32's; Bfloat16Number's are found by argument
  const Number one(1.0f), step(float(update_steps() + 1));
  const Number alpha = Number(learning_rate()) * sqrt(one - pow(Number(beta_2_), step)) /
                       (one - pow(Number(beta_1_), step));
  const Number one_minus_beta_1(1 - beta_1_), one_minus_beta_2(1 - beta_2_), epsilon(epsilon_);
  float* m = slots[0];
  float* v = slots[1];
  // One loop per amsgrad value: a branch inside would keep GCC from vectorizing it.
  auto run = [&](auto amsgrad) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count; ++i) {
      const Number g(gradient[i]);
      const Number momentum = Number(m[i]) + (g - Number(m[i])) * one_minus_beta_1;
      Number velocity = Number(v[i]) + (g * g - Number(v[i])) * one_minus_beta_2;
      m[i] = float(momentum);
      v[i] = float(velocity);
      if constexpr (decltype(amsgrad)::value) {
        velocity = max(Number(slots[2][i]), velocity);
        slots[2][i] = float(velocity);
      }
      value[i] = float(Number(value[i]) - momentum * alpha / (sqrt(velocity) + epsilon));
    }
  };
  if (amsgrad_) {
    run(std::true_type{});
  } else {
    run(std::false_type{});
  }
}

void Adam::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<float>(value, gradient, slots, count);
}

void Adam::update_bfloat16(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<kernels::Bfloat16Number>(value, gradient, slots, count);
}

std::string Adam::bfloat16_refusal() const {
  return bfloat16_beta_refusal({{"beta_1", beta_1_}, {"beta_2", beta_2_}},
                               "makes no update at all (its step size lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) is 0 "
                               "or undefined)");
}

}  // namespace tenfold::optimizers
