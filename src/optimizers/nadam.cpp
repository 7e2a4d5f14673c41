#include "optimizers/nadam.h"

#include "kernels/bfloat16.h"

namespace tenfold::optimizers {

Nadam::Nadam(float learning_rate, float beta_1, float beta_2, float epsilon)
    : Optimizer(learning_rate), beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon), u_product_(Shape{}) {
  u_product_.data<float>()[0] = 1.0f;
}

nlohmann::json Nadam::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["beta_1"] = beta_1_;
  config["beta_2"] = beta_2_;
  config["epsilon"] = epsilon_;
  return config;
}

namespace {

/// Keras' u_product * beta_1 * (1 - 0.5 * 0.96^step), in u_product's dtype.
template <typename Number>
float next_u_product(float u_product, float beta_1, int64_t step) {
  using kernels::pow;
  const Number one(1.0f), half(0.5f);
  return float(Number(u_product) * Number(beta_1) * (one - half * pow(Number(0.96f), Number(float(step)))));
}

}  // namespace

void Nadam::begin_step() {
  float& u_product = u_product_.data<float>()[0];
  const int64_t step = update_steps() + 1;
  const bool bfloat16 = !variables().empty() && variables().front()->dtype() == DType::bfloat16;
  u_product = bfloat16 ? next_u_product<kernels::Bfloat16Number>(u_product, beta_1_, step)
                       : next_u_product<float>(u_product, beta_1_, step);
}

template <typename Number>
void Nadam::update_in(float* value, const float* gradient, std::span<float* const> slots, int64_t count) const {
  using kernels::pow, kernels::sqrt;
  const Number one(1.0f), half(0.5f), decay(0.96f), beta_1(beta_1_), beta_2(beta_2_), lr(learning_rate()),
      epsilon(epsilon_);
  const Number step(float(update_steps() + 1)), next_step(float(update_steps() + 2));
  const Number u_t = beta_1 * (one - half * pow(decay, step));
  const Number u_next = beta_1 * (one - half * pow(decay, next_step));
  const Number u_product(u_product_.data<float>()[0]);
  const Number u_product_next = u_product * u_next;
  const Number beta_2_power = pow(beta_2, step);
  const Number one_minus_beta_1 = one - beta_1, one_minus_beta_2 = one - beta_2;
  float* m = slots[0];
  float* v = slots[1];
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const Number g(gradient[i]);
    const Number momentum = Number(m[i]) + (g - Number(m[i])) * one_minus_beta_1;
    const Number velocity = Number(v[i]) + (g * g - Number(v[i])) * one_minus_beta_2;
    m[i] = float(momentum);
    v[i] = float(velocity);
    const Number m_hat = u_next * momentum / (one - u_product_next) + (one - u_t) * g / (one - u_product);
    const Number v_hat = velocity / (one - beta_2_power);
    value[i] = float(Number(value[i]) - m_hat * lr / (sqrt(v_hat) + epsilon));
  }
}

void Nadam::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<float>(value, gradient, slots, count);
}

void Nadam::update_bfloat16(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  update_in<kernels::Bfloat16Number>(value, gradient, slots, count);
}

std::string Nadam::bfloat16_refusal() const {
  return bfloat16_beta_refusal({{"beta_1", beta_1_}, {"beta_2", beta_2_}},
                               "turns every weight into NaN (v / (1 - beta_2^t) is 0 / 0)");
}

}  // namespace tenfold::optimizers
