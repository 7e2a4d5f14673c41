#include "optimizers/sgd.h"

#include "kernels/bfloat16.h"

namespace tenfold::optimizers {

namespace {

/// Keras' update in Keras' order of operations, in float32 (Number = float) or in bfloat16
/// arithmetic (kernels::Bfloat16Number). Without momentum `m` is null.
template <typename Number>
void sgd_update(float* value, const float* gradient, float* m, int64_t count, float learning_rate,
                float momentum, bool nesterov) {
  const Number lr(learning_rate), beta(momentum);
  if (!m) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count; ++i) value[i] = float(Number(value[i]) - Number(gradient[i]) * lr);
    return;
  }
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    const Number g(gradient[i]);
    const Number velocity = Number(m[i]) * beta - g * lr;
    m[i] = float(velocity);
    value[i] = float(Number(value[i]) + (nesterov ? velocity * beta - g * lr : velocity));
  }
}

}  // namespace

nlohmann::json SGD::get_config() const {
  nlohmann::json config = Optimizer::get_config();
  config["momentum"] = momentum_;
  config["nesterov"] = nesterov_;
  return config;
}

void SGD::update(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  sgd_update<float>(value, gradient, momentum_ == 0.0f ? nullptr : slots[0], count, learning_rate(), momentum_,
                    nesterov_);
}

void SGD::update_bfloat16(float* value, const float* gradient, std::span<float* const> slots, int64_t count) {
  sgd_update<kernels::Bfloat16Number>(value, gradient, momentum_ == 0.0f ? nullptr : slots[0], count,
                                      learning_rate(), momentum_, nesterov_);
}

}  // namespace tenfold::optimizers
