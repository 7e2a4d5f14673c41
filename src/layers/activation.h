#pragma once
// keras.layers.Activation, ReLU and Softmax (over the last axis).
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
  kernels::Activation kind() const { return activation_; }

 protected:
  Activation(kernels::Activation activation, const std::string& snake_name, const std::string& name);

 private:
  kernels::Activation activation_;
};

class ReLU : public Activation {
 public:
  explicit ReLU(const std::string& name = "");
  std::string class_name() const override { return "ReLU"; }
  nlohmann::json get_config() const override;
};

class Softmax : public Activation {
 public:
  explicit Softmax(const std::string& name = "");
  std::string class_name() const override { return "Softmax"; }
  nlohmann::json get_config() const override;
};

}  // namespace tenfold::layers
