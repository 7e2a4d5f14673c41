#include "layers/flatten.h"

#include "core/error.h"
#include "layers/reshape.h"

namespace tenfold::layers {

Shape Flatten::compute_output_shape(const Shape& input_shape) const {
  check_argument(input_shape.rank() >= 1, "Flatten needs a batch dimension");
  return {input_shape[0], input_shape.without_batch().num_elements()};
}

std::unique_ptr<LayerStep> Flatten::compile(const Shape&, const CompileOptions&) {
  return reshape_step();
}

nlohmann::json Flatten::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["data_format"] = "channels_last";
  return config;
}

}  // namespace tenfold::layers
