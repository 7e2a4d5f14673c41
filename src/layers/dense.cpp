#include "layers/dense.h"

#include "core/error.h"
#include "kernels/onednn/dense.h"
#include "layers/weighted_step.h"

namespace tenfold::layers {

using kernels::onednn::DenseKernel;

Dense::Dense(const DenseOptions& options)
    : Layer("dense", options.name),
      options_(options),
      activation_(kernels::parse_activation(options.activation)) {
  check_argument(options.units > 0,
                 "Dense units must be positive, got " + std::to_string(options.units));
}

Shape Dense::compute_output_shape(const Shape& input_shape) const {
  check_argument(input_shape.rank() >= 2, "Dense '" + name() +
                                              "' expects inputs of rank 2 or more, got " +
                                              input_shape.to_string(true));
  Shape output = input_shape;
  output[output.rank() - 1] = options_.units;
  return output;
}

void Dense::build_weights(const Shape& input_shape, Random& random) {
  compute_output_shape(input_shape);  // validates the rank
  int64_t in = input_shape[input_shape.rank() - 1];
  // The kernel stays in Keras' layout (see kernels/onednn/dense.h).
  add_weight("kernel", {in, options_.units}, options_.kernel_initializer, random);
  if (options_.use_bias) {
    add_weight("bias", {options_.units}, options_.bias_initializer, random);
  }
}

std::unique_ptr<LayerStep> Dense::compile(const Shape& input_shape, const CompileOptions& options) {
  int64_t in = input_shape[input_shape.rank() - 1];
  int64_t rows = input_shape.num_elements() / in;
  return std::make_unique<WeightedStep<DenseKernel>>(
      activation_, rows, options_.units, weights(), options.compute_dtype,
      [&](kernels::Activation fused, DType dtype) {
        return DenseKernel(rows, in, options_.units, fused, options_.use_bias,
                           options.need_input_gradient, dtype);
      },
      kernels::onednn::runs_faster_after_kernel(activation_, options.compute_dtype));
}

nlohmann::json Dense::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["units"] = options_.units;
  add_weighted_config(config, options_.activation, options_.use_bias,
                      options_.kernel_initializer, options_.bias_initializer);
  return config;
}

}  // namespace tenfold::layers
