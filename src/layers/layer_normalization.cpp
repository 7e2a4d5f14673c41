#include "layers/layer_normalization.h"

#include "core/error.h"
#include "kernels/group_norm.h"

namespace tenfold::layers {

namespace {

class LayerNormStep : public LayerStep {
 public:
  LayerNormStep(const LayerNormalization::Groups& g, double epsilon, const Variable* gamma, const Variable* beta)
      : kernel_(g.samples, g.positions, g.channels, g.groups, epsilon), gamma_(gamma), beta_(beta) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    kernel_.forward(input.data<float>(), data_or_null(gamma_), data_or_null(beta_), output.data<float>());
  }

  void backward(const Tensor& input, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor> weight_gradients, bool) override {
    // Weight gradients in the layer's order: gamma, beta (those present).
    float* diff_gamma = gamma_ ? weight_gradients[0].data<float>() : nullptr;
    float* diff_beta = beta_ ? weight_gradients[gamma_ ? 1 : 0].data<float>() : nullptr;
    kernel_.backward(input.data<float>(), grad_output.data<float>(), data_or_null(gamma_),
                     grad_input ? grad_input->data<float>() : nullptr, diff_gamma, diff_beta);
  }

 private:
  kernels::GroupNormKernel kernel_;
  const Variable* gamma_;
  const Variable* beta_;
};

}  // namespace

LayerNormalization::LayerNormalization(const LayerNormalizationOptions& options)
    : LayerNormalization(options, "layer_normalization") {}

LayerNormalization::LayerNormalization(const LayerNormalizationOptions& options, const std::string& snake_name)
    : Layer(snake_name, options.name), options_(options) {
  check_argument(options.epsilon > 0, "normalization '" + name() + "': epsilon must be positive, got " +
                                          std::to_string(options.epsilon));
}

Shape LayerNormalization::compute_output_shape(const Shape& input_shape) const {
  check_argument(input_shape.rank() >= 2, class_name() + " '" + name() +
                                              "' expects inputs of rank 2 or more, got " +
                                              input_shape.to_string(true));
  check_argument(options_.axis == -1 || options_.axis == int64_t(input_shape.rank()) - 1,
                 class_name() + " '" + name() + "' normalises the last axis; got axis=" +
                     std::to_string(options_.axis) + " for inputs " + input_shape.to_string(true) +
                     ": use axis=-1");
  return input_shape;
}

void LayerNormalization::build_weights(const Shape& input_shape, Random& random) {
  compute_output_shape(input_shape);
  const Shape features{input_shape[input_shape.rank() - 1]};
  if (options_.scale) gamma_ = &add_weight("gamma", features, options_.gamma_initializer, random);
  if (options_.center) beta_ = &add_weight("beta", features, options_.beta_initializer, random);
}

LayerNormalization::Groups LayerNormalization::groups_of(const Shape& input_shape) const {
  // Every row is a sample of one position and one group.
  const int64_t features = input_shape[input_shape.rank() - 1];
  return {input_shape.num_elements() / features, 1, features, 1};
}

std::unique_ptr<LayerStep> LayerNormalization::compile(const Shape& input_shape, const CompileOptions&) {
  compute_output_shape(input_shape);
  return std::make_unique<LayerNormStep>(groups_of(input_shape), options_.epsilon, gamma_, beta_);
}

nlohmann::json LayerNormalization::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["axis"] = nlohmann::json::array({options_.axis});
  config["epsilon"] = options_.epsilon;
  config["center"] = options_.center;
  config["scale"] = options_.scale;
  config["rms_scaling"] = false;
  config["beta_initializer"] = options_.beta_initializer.get_config();
  config["gamma_initializer"] = options_.gamma_initializer.get_config();
  for (const char* key : {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"}) {
    config[key] = nullptr;
  }
  return config;
}

GroupNormalization::GroupNormalization(int64_t groups, const LayerNormalizationOptions& options)
    : LayerNormalization(options, "group_normalization"), groups_(groups) {
  check_argument(groups > 0 || groups == -1, "GroupNormalization '" + name() +
                                                 "': groups must be positive, or -1 for one per channel; got " +
                                                 std::to_string(groups));
}

Shape GroupNormalization::compute_output_shape(const Shape& input_shape) const {
  LayerNormalization::compute_output_shape(input_shape);
  const int64_t channels = input_shape[input_shape.rank() - 1];
  check_argument(groups_ == -1 || (groups_ <= channels && channels % groups_ == 0),
                 "GroupNormalization '" + name() + "': " + std::to_string(groups_) +
                     " groups must divide the input's " + std::to_string(channels) + " channels");
  return input_shape;
}

LayerNormalization::Groups GroupNormalization::groups_of(const Shape& input_shape) const {
  const int64_t channels = input_shape[input_shape.rank() - 1];
  return {input_shape[0], input_shape.without_batch().num_elements() / channels, channels,
          groups_ == -1 ? channels : groups_};
}

nlohmann::json GroupNormalization::get_config() const {
  nlohmann::json config = LayerNormalization::get_config();
  config.erase("rms_scaling");
  config["groups"] = groups_ == -1 && built() ? input_shape()[input_shape().rank() - 1] : groups_;
  config["axis"] = options().axis;
  return config;
}

}  // namespace tenfold::layers
