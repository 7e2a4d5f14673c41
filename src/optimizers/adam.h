#pragma once
// keras.optimizers.Adam, Keras' update: epsilon is added to sqrt of the uncorrected v, and the
// bias correction is folded into the step size:
//   alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
//   m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2)
//   w -= alpha * m / (sqrt(v) + epsilon)
// With amsgrad, v_hat = max(v_hat, v) takes v's place in the update. On bfloat16 variables
// every operation rounds to bfloat16, so a beta that rounds to 1.0 (the default beta_2, 0.999)
// makes Keras' step size 0: refused there, saying so.
#include "optimizers/optimizer.h"

namespace tenfold::optimizers {

class Adam : public Optimizer {
 public:
  explicit Adam(float learning_rate = 0.001f, float beta_1 = 0.9f, float beta_2 = 0.999f,
                float epsilon = 1e-7f, bool amsgrad = false)
      : Optimizer(learning_rate), beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon), amsgrad_(amsgrad) {}
  std::string class_name() const override { return "Adam"; }
  nlohmann::json get_config() const override;
  std::vector<std::vector<std::string>> slot_groups() const override {
    if (amsgrad_) return {{"momentum", "velocity"}, {"velocity_hat"}};
    return {{"momentum", "velocity"}};
  }

 protected:
  void update(float* value, const float* gradient, std::span<float* const> slots,
              int64_t count) override;
  std::string bfloat16_refusal() const override;
  void update_bfloat16(float* value, const float* gradient, std::span<float* const> slots,
                       int64_t count) override;

 private:
  /// Keras' update in Keras' order of operations, in float32 (Number = float) or in bfloat16
  /// arithmetic (kernels::Bfloat16Number).
  template <typename Number>
  void update_in(float* value, const float* gradient, std::span<float* const> slots, int64_t count) const;

  float beta_1_, beta_2_, epsilon_;
  bool amsgrad_;
};

/// keras.optimizers.AdamW: Adam with decoupled weight decay (default 0.004), w -= w * wd * lr
/// before each update.
class AdamW : public Adam {
 public:
  explicit AdamW(float learning_rate = 0.001f, float beta_1 = 0.9f, float beta_2 = 0.999f,
                 float epsilon = 1e-7f, float weight_decay = 0.004f, bool amsgrad = false)
      : Adam(learning_rate, beta_1, beta_2, epsilon, amsgrad) {
    set_gradient_options({.weight_decay = weight_decay});
  }
  std::string class_name() const override { return "AdamW"; }
};

}  // namespace tenfold::optimizers
