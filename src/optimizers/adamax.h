#pragma once
// keras.optimizers.Adamax, Keras' update:
//   m += (g - m) * (1 - beta_1);  u = max(beta_2 * u, |g|)
//   w -= lr * m / ((1 - beta_1^t) * (u + epsilon))
#include "optimizers/optimizer.h"

namespace tenfold::optimizers {

class Adamax : public Optimizer {
 public:
  explicit Adamax(float learning_rate = 0.001f, float beta_1 = 0.9f, float beta_2 = 0.999f,
                  float epsilon = 1e-7f)
      : Optimizer(learning_rate), beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon) {}
  std::string class_name() const override { return "Adamax"; }
  nlohmann::json get_config() const override;
  std::vector<std::vector<std::string>> slot_groups() const override { return {{"momentum", "norm"}}; }

 protected:
  void begin_step() override;
  void update(float* value, const float* gradient, std::span<float* const> slots,
              int64_t count) override;

 private:
  float beta_1_, beta_2_, epsilon_;
  float correction_ = 1;  // 1 - beta_1^t
};

}  // namespace tenfold::optimizers
