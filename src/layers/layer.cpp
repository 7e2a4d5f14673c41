#include "layers/layer.h"

#include <map>
#include <mutex>

#include "core/error.h"

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

nlohmann::json Layer::get_config() const {
  return {{"name", name_}, {"trainable", true}, {"dtype", "float32"}};
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

int64_t Layer::count_params() const {
  int64_t count = 0;
  for (const auto& weight : weights_) count += weight->shape().num_elements();
  return count;
}

Variable& Layer::add_weight(const std::string& name, const Shape& shape,
                            const Initializer& initializer, Random& random,
                            std::shared_ptr<const WeightLayout> layout) {
  auto variable = std::make_unique<Variable>(name, shape, std::move(layout));
  Tensor keras_value(shape);
  initializer.fill(keras_value, random);
  variable->assign(keras_value);
  weights_.push_back(std::move(variable));
  return *weights_.back();
}

}  // namespace tenfold
