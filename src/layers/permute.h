#pragma once
// keras.layers.Permute: reorders the axes of each sample; dims is a permutation of 1..rank-1
// (the batch axis stays first), e.g. (2, 1) transposes the rows and columns of a matrix.
#include <vector>

#include "layers/layer.h"

namespace tenfold::layers {

class Permute : public Layer {
 public:
  explicit Permute(std::vector<int64_t> dims, const std::string& name = "");
  std::string class_name() const override { return "Permute"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 private:
  std::vector<int64_t> dims_;
};

}  // namespace tenfold::layers
