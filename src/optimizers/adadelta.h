#pragma once
// keras.optimizers.Adadelta (Zeiler 2012), Keras' update:
//   a = rho * a + (1 - rho) * g^2
//   delta = -sqrt(d + epsilon) * g / sqrt(a + epsilon)
//   d = rho * d + (1 - rho) * delta^2;  w += lr * delta
#include "optimizers/optimizer.h"

namespace tenfold::optimizers {

class Adadelta : public Optimizer {
 public:
  explicit Adadelta(float learning_rate = 0.001f, float rho = 0.95f, float epsilon = 1e-7f)
      : Optimizer(learning_rate), rho_(rho), epsilon_(epsilon) {}
  std::string class_name() const override { return "Adadelta"; }
  nlohmann::json get_config() const override;
  std::vector<std::vector<std::string>> slot_groups() const override {
    return {{"accumulated_grad", "accumulated_delta_var"}};
  }

 protected:
  void update(float* value, const float* gradient, std::span<float* const> slots,
              int64_t count) override;
  std::string bfloat16_refusal() const override { return ""; }
  void update_bfloat16(float* value, const float* gradient, std::span<float* const> slots,
                       int64_t count) override;

 private:
  /// update() and update_bfloat16(): Keras' operations in Keras' order, in float32 (Number =
  /// float) or bfloat16 arithmetic (kernels::Bfloat16Number).
  template <typename Number>
  void update_in(float* value, const float* gradient, std::span<float* const> slots, int64_t count) const;
  float rho_, epsilon_;
};

}  // namespace tenfold::optimizers
