#pragma once
// keras.layers.PReLU: x for x >= 0, alpha * x below, with alpha learned per element of a
// sample (one alpha along each of shared_axes, e.g. [1, 2] for one per channel of an image).
#include <vector>

#include "layers/layer.h"

namespace tenfold::layers {

class PReLU : public Layer {
 public:
  /// shared_axes: sample axes (1 is the first after the batch) that share one alpha.
  PReLU(const Initializer& alpha_initializer = Initializer("zeros"), std::vector<int64_t> shared_axes = {},
        const std::string& name = "");
  std::string class_name() const override { return "PReLU"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 protected:
  void build_weights(const Shape& input_shape, Random& random) override;

 private:
  /// alpha's shape for inputs of `input_shape`: the sample shape, 1 along shared axes.
  Shape alpha_shape(const Shape& input_shape) const;

  Initializer alpha_initializer_;
  std::vector<int64_t> shared_axes_;
  Variable* alpha_ = nullptr;
};

}  // namespace tenfold::layers
