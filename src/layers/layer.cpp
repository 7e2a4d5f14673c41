#include "layers/layer.h"

#include <map>
#include <mutex>

#include "core/error.h"
#include "core/random.h"

namespace tenfold {

namespace {

std::mutex name_mutex;
std::map<std::string, int> name_counters;

std::string unique_default_name(const std::string& base) {
  std::lock_guard<std::mutex> lock(name_mutex);
  int count = name_counters[base]++;
  return count == 0 ? base : base + "_" + std::to_string(count);
}

}  // namespace

void LayerStep::forward(const Tensor&, Tensor&, bool) {
  throw Error(ErrorCode::internal, "this layer's step takes a list of inputs");
}

void LayerStep::backward(const Tensor&, const Tensor&, Tensor&, Tensor*, std::span<Tensor>, bool) {
  throw Error(ErrorCode::internal, "this layer's step takes a list of inputs");
}

void LayerStep::forward(std::span<const Tensor> inputs, Tensor& output, bool training) {
  if (inputs.size() != 1) throw Error(ErrorCode::internal, "a one-input step got several inputs");
  forward(inputs[0], output, training);
}

void LayerStep::backward(std::span<const Tensor> inputs, const Tensor& output, Tensor& grad_output,
                         std::span<Tensor* const> grad_inputs, std::span<Tensor> weight_gradients,
                         bool grad_is_for_logits) {
  if (inputs.size() != 1) throw Error(ErrorCode::internal, "a one-input step got several inputs");
  backward(inputs[0], output, grad_output, grad_inputs[0], weight_gradients, grad_is_for_logits);
}

void reset_layer_names() {
  std::lock_guard<std::mutex> lock(name_mutex);
  name_counters.clear();
}

Layer::Layer(const std::string& class_snake_name, const std::string& name)
    : name_(name.empty() ? unique_default_name(class_snake_name) : name) {}

void Layer::build(const Shape& input_shape, Random& random) {
  if (built_) {
    check_argument(input_shape.without_batch() == input_shape_.without_batch(),
                   "layer '" + name_ + "' was built for inputs " + input_shape_.to_string(true) +
                       " and cannot take " + input_shape.to_string(true));
    return;
  }
  build_weights(input_shape, random);
  input_shape_ = input_shape;
  built_ = true;
}

void Layer::build_weights(const Shape&, Random&) {}

void Layer::check_one_input(const std::vector<Shape>& input_shapes) const {
  check_argument(input_shapes.size() == 1, "layer '" + name_ + "' (" + class_name() +
                                               ") takes one input, got " +
                                               std::to_string(input_shapes.size()));
}

void Layer::build_for(const std::vector<Shape>& input_shapes, Random& random) {
  if (!takes_input_list()) {
    check_one_input(input_shapes);
    build(input_shapes[0], random);
    return;
  }
  output_shape_for(input_shapes);  // checks the shapes go together
  input_shape_ = input_shapes.at(0);
  built_ = true;
}

Shape Layer::output_shape_for(const std::vector<Shape>& input_shapes) const {
  check_one_input(input_shapes);
  return compute_output_shape(input_shapes[0]);
}

std::unique_ptr<LayerStep> Layer::compile_for(const std::vector<Shape>& input_shapes,
                                              const CompileOptions& options) {
  check_one_input(input_shapes);
  return compile(input_shapes[0], options);
}

KerasTensor Layer::operator()(const KerasTensor& input) {
  check_argument(!takes_input_list(), "layer '" + name_ + "' (" + class_name() +
                                          ") must be called on a list of inputs, e.g. ({a, b})");
  return (*this)(std::vector<KerasTensor>{input});
}

KerasTensor Layer::operator()(const std::vector<KerasTensor>& inputs) {
  check_argument(!inputs.empty(), "layer '" + name_ + "' was called on no inputs");
  std::shared_ptr<Layer> self = weak_from_this().lock();
  check_argument(self != nullptr, "layer '" + name_ + "' must be owned by a shared_ptr "
                                  "(std::make_shared) to be called on tensors");
  std::vector<Shape> shapes;
  for (const KerasTensor& input : inputs) shapes.push_back(input.shape().with_leading(1));
  build_for(shapes, global_random());
  return KerasTensor(self, inputs, output_shape_for(shapes).without_batch());
}

nlohmann::json Layer::get_config() const {
  // float32 as Keras 2 wrote it (both Kerases read it); other policies as Keras 3 writes them.
  const nlohmann::json dtype = dtype_policy_ == DTypePolicy::float32 ? nlohmann::json("float32")
                                                                      : dtype_policy_config(dtype_policy_);
  return {{"name", name_}, {"trainable", trainable_}, {"dtype", dtype}};
}

std::vector<Variable*> Layer::weights() {
  std::vector<Variable*> result;
  for (auto& weight : weights_) result.push_back(weight.get());
  return result;
}

std::vector<const Variable*> Layer::weights() const {
  std::vector<const Variable*> result;
  for (const auto& weight : weights_) result.push_back(weight.get());
  return result;
}

std::vector<Variable*> Layer::trainable_weights() {
  std::vector<Variable*> result;
  for (auto& weight : weights_) {
    if (trainable_ && weight->trainable()) result.push_back(weight.get());
  }
  return result;
}

void Layer::update_state(std::span<const Tensor>) {
  throw Error(ErrorCode::internal, "layer '" + name_ + "' has no state to update");
}

int64_t Layer::count_params() const {
  int64_t count = 0;
  for (const auto& weight : weights_) count += weight->shape().num_elements();
  return count;
}

void Layer::set_weight_regularizer(const std::string& name, std::optional<Regularizer> regularizer) {
  if (regularizer) {
    regularizers_[name] = *regularizer;
  } else {
    regularizers_.erase(name);
  }
  for (auto& weight : weights_) {
    if (weight->name() == name) weight->set_regularizer(regularizer);
  }
}

void Layer::set_weight_constraint(const std::string& name, std::optional<Constraint> constraint) {
  if (constraint) {
    constraints_[name] = *constraint;
  } else {
    constraints_.erase(name);
  }
  for (auto& weight : weights_) {
    if (weight->name() == name) weight->set_constraint(constraint);
  }
}

void Layer::set_dtype_policy(DTypePolicy policy) {
  dtype_policy_ = policy;
  for (Variable* weight : weights()) weight->set_dtype(variable_dtype(policy));
}

Variable& Layer::add_weight(const std::string& name, const Shape& shape,
                            const Initializer& initializer, Random& random,
                            std::shared_ptr<const WeightLayout> layout, bool trainable) {
  auto variable = std::make_unique<Variable>(name, shape, std::move(layout), trainable);
  Tensor keras_value(shape);
  initializer.fill(keras_value, random);
  variable->set_dtype(variable_dtype(dtype_policy_));
  variable->assign(keras_value);
  if (auto found = regularizers_.find(name); found != regularizers_.end()) variable->set_regularizer(found->second);
  if (auto found = constraints_.find(name); found != constraints_.end()) variable->set_constraint(found->second);
  weights_.push_back(std::move(variable));
  return *weights_.back();
}

}  // namespace tenfold
