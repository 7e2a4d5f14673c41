#pragma once
// keras.layers.Activation (any built-in activation by name) and the activation layers ReLU
// (negative_slope, max_value), LeakyReLU, ELU and Softmax (over any axis).
#include <optional>

#include "kernels/window.h"
#include "layers/layer.h"

namespace tenfold::layers {

/// Same shape in and out.
class Activation : public Layer {
 public:
  explicit Activation(const std::string& activation, const std::string& name = "");
  std::string class_name() const override { return "Activation"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;
  const kernels::Activation& kind() const { return activation_; }
  /// True when the activation can run as a post-op of the kernel before it (a merge's).
  virtual bool fuses_as_post_op() const;

 protected:
  Activation(const kernels::Activation& activation, const std::string& snake_name, const std::string& name);

 private:
  kernels::Activation activation_;
};

/// max(x, 0) capped at max_value, negative_slope * x below zero (Keras' ReLU; threshold 0).
class ReLU : public Activation {
 public:
  explicit ReLU(std::optional<double> max_value = std::nullopt, double negative_slope = 0,
                const std::string& name = "");
  std::string class_name() const override { return "ReLU"; }
  nlohmann::json get_config() const override;

 private:
  std::optional<double> max_value_;  // as configured (the kernel computes in float)
  double negative_slope_;
};

/// x below zero times negative_slope (Keras' default 0.3).
class LeakyReLU : public Activation {
 public:
  explicit LeakyReLU(double negative_slope = 0.3, const std::string& name = "");
  std::string class_name() const override { return "LeakyReLU"; }
  nlohmann::json get_config() const override;

 private:
  double negative_slope_;
};

/// alpha * (exp(x) - 1) below zero.
class ELU : public Activation {
 public:
  explicit ELU(double alpha = 1.0, const std::string& name = "");
  std::string class_name() const override { return "ELU"; }
  nlohmann::json get_config() const override;

 private:
  double alpha_;
};

/// Softmax over `axis` (negative from the end; not the batch axis).
class Softmax : public Activation {
 public:
  explicit Softmax(int64_t axis = -1, const std::string& name = "");
  std::string class_name() const override { return "Softmax"; }
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;
  bool fuses_as_post_op() const override { return false; }

 private:
  int64_t axis_;
};

}  // namespace tenfold::layers
