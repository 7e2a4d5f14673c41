#include "layers/input.h"

#include "core/error.h"

namespace tenfold::layers {

InputLayer::InputLayer(Shape sample_shape, const std::string& name)
    : Layer("input_layer", name), sample_shape_(std::move(sample_shape)) {
  for (int64_t dim : sample_shape_.dims()) {
    check_argument(dim > 0, "Input shape " + sample_shape_.to_string() +
                                " must have positive dimensions (no batch dimension)");
  }
}

std::unique_ptr<LayerStep> InputLayer::compile(const Shape&, const CompileOptions&) {
  throw Error(ErrorCode::internal, "InputLayer is not compiled; models skip it");
}

nlohmann::json InputLayer::get_config() const {
  std::vector<nlohmann::json> batch_shape = {nullptr};
  for (int64_t dim : sample_shape_.dims()) batch_shape.push_back(dim);
  return {{"name", name()}, {"batch_shape", batch_shape}, {"dtype", "float32"}, {"sparse", false}};
}

std::shared_ptr<InputLayer> Input(Shape sample_shape, const std::string& name) {
  return std::make_shared<InputLayer>(std::move(sample_shape), name);
}

}  // namespace tenfold::layers
