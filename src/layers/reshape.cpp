#include "layers/reshape.h"

#include <cstring>

#include "core/error.h"

namespace tenfold::layers {

namespace {

class ReshapeStep : public LayerStep {
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

std::unique_ptr<LayerStep> reshape_step() { return std::make_unique<ReshapeStep>(); }

Reshape::Reshape(std::vector<int64_t> target_shape, const std::string& name)
    : Layer("reshape", name), target_shape_(std::move(target_shape)) {}

Shape Reshape::compute_output_shape(const Shape& input_shape) const {
  const int64_t elements = input_shape.without_batch().num_elements();
  std::vector<int64_t> dims = {input_shape[0]};
  int64_t known = 1, unknown = -1;
  for (size_t i = 0; i < target_shape_.size(); ++i) {
    int64_t dim = target_shape_[i];
    check_argument(dim > 0 || (dim == -1 && unknown < 0),
                   "Reshape '" + name() + "': target_shape may hold positive sizes and one -1");
    if (dim == -1) unknown = int64_t(i) + 1;
    else known *= dim;
    dims.push_back(dim);
  }
  if (unknown > 0 && known > 0 && elements % known == 0) dims[size_t(unknown)] = elements / known;
  Shape output(dims);
  check_argument(output.without_batch().num_elements() == elements,
                 "Reshape '" + name() + "' cannot make samples of " + input_shape.to_string(true) +
                     " into " + output.to_string(true) + ": the element counts differ");
  return output;
}

std::unique_ptr<LayerStep> Reshape::compile(const Shape& input_shape, const CompileOptions&) {
  compute_output_shape(input_shape);
  return reshape_step();
}

nlohmann::json Reshape::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["target_shape"] = target_shape_;
  return config;
}

}  // namespace tenfold::layers
