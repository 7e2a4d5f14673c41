#pragma once
// LayerScale of keras.applications' ConvNeXt (keras.src.applications.convnext): each feature of
// the last axis times a learned scale, gamma, which starts at init_values
// (https://arxiv.org/abs/2103.17239). Part of Keras, so Tenfold builds it from the file's
// config like any built-in layer.
#include "layers/layer.h"

namespace tenfold::layers {

class LayerScale : public Layer {
 public:
  LayerScale(double init_values, int64_t projection_dim, const std::string& name = "");
  std::string class_name() const override { return "LayerScale"; }
  std::string keras_module() const override { return "keras.src.applications.convnext"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 protected:
  void build_weights(const Shape& input_shape, Random& random) override;

 private:
  double init_values_;
  int64_t projection_dim_;
  Variable* gamma_ = nullptr;
};

}  // namespace tenfold::layers
