#include "layers/flatten.h"

#include <cstring>

#include "core/error.h"

namespace tenfold::layers {

namespace {

class FlattenStep : public LayerStep {
 public:
  // The compiled step makes the output a view of the input, so there is nothing to do; the
  // copies below run only when a caller hands separate buffers.
  void forward(const Tensor& input, Tensor& output, bool) override {
    if (input.raw_data() != output.raw_data()) std::memcpy(output.raw_data(), input.raw_data(), input.num_bytes());
  }
  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool) override {
    if (grad_input && grad_input->raw_data() != grad_output.raw_data()) {
      std::memcpy(grad_input->raw_data(), grad_output.raw_data(), grad_output.num_bytes());
    }
  }
  bool is_reshape() const override { return true; }
};

}  // namespace

Shape Flatten::compute_output_shape(const Shape& input_shape) const {
  check_argument(input_shape.rank() >= 1, "Flatten needs a batch dimension");
  return {input_shape[0], input_shape.without_batch().num_elements()};
}

std::unique_ptr<LayerStep> Flatten::compile(const Shape&, const CompileOptions&) {
  return std::make_unique<FlattenStep>();
}

nlohmann::json Flatten::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["data_format"] = "channels_last";
  return config;
}

}  // namespace tenfold::layers
