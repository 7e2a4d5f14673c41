#pragma once
// keras.optimizers.RMSprop (not centered): v = rho * v + (1 - rho) * g^2,
// step = lr * g / sqrt(v + epsilon); with momentum, m = momentum * m + step, w -= m.
#include "optimizers/optimizer.h"

namespace tenfold::optimizers {

class RMSprop : public Optimizer {
 public:
  explicit RMSprop(float learning_rate = 0.001f, float rho = 0.9f, float momentum = 0.0f,
                   float epsilon = 1e-7f)
      : Optimizer(learning_rate), rho_(rho), momentum_(momentum), epsilon_(epsilon) {}
  std::string class_name() const override { return "RMSprop"; }
  nlohmann::json get_config() const override;
  bool keras_interleaves_slots() const override { return false; }
  std::vector<std::string> slot_names() const override { return momentum_ > 0 ? std::vector<std::string>{"velocity", "momentum"} : std::vector<std::string>{"velocity"}; }

 protected:
  int slots_per_variable() const override { return 2; }
  void update(float* value, const float* gradient, std::span<float* const> slots,
              int64_t count) override;

 private:
  float rho_, momentum_, epsilon_;
};

}  // namespace tenfold::optimizers
