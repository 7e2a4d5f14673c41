#pragma once
// keras.optimizers.SGD: with momentum, m = momentum * m - lr * g, then w += m
// (nesterov: w += momentum * m - lr * g); without, w -= lr * g.
#include "optimizers/optimizer.h"

namespace tenfold::optimizers {

class SGD : public Optimizer {
 public:
  explicit SGD(float learning_rate = 0.01f, float momentum = 0.0f, bool nesterov = false)
      : Optimizer(learning_rate), momentum_(momentum), nesterov_(nesterov) {}
  std::string class_name() const override { return "SGD"; }
  nlohmann::json get_config() const override;
  std::vector<std::vector<std::string>> slot_groups() const override {
    return momentum_ > 0 ? std::vector<std::vector<std::string>>{{"momentum"}} : std::vector<std::vector<std::string>>{};
  }

 protected:
  void update(float* value, const float* gradient, std::span<float* const> slots,
              int64_t count) override;
  std::string bfloat16_refusal() const override { return ""; }
  void update_bfloat16(float* value, const float* gradient, std::span<float* const> slots,
                       int64_t count) override;

 private:
  float momentum_;
  bool nesterov_;
};

}  // namespace tenfold::optimizers
