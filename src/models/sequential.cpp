#include "models/sequential.h"

#include "core/error.h"
#include "core/random.h"
#include "layers/input.h"
#include "layers/registry.h"

namespace tenfold::models {

Sequential::Sequential(std::vector<std::shared_ptr<Layer>> layers, const std::string& name)
    : Model(name, "sequential") {
  for (auto& layer : layers) add(std::move(layer));
}

void Sequential::add(std::shared_ptr<Layer> layer) {
  check_argument(layer != nullptr, "Sequential.add got a null layer");
  if (auto input = std::dynamic_pointer_cast<layers::InputLayer>(layer)) {
    check_argument(stack_.empty() && !sample_shape_,
                   "an Input must come first in a Sequential model");
    build(input->sample_shape());
    return;
  }
  check_argument(!layer->takes_input_list(), "layer '" + layer->name() + "' (" + layer->class_name() +
                                                 ") merges several inputs: use it in a Functional "
                                                 "model, not a Sequential one");
  stack_.push_back(std::move(layer));
  rebuild_graph();
}

void Sequential::build(const Shape& sample_shape) {
  sample_shape_ = sample_shape;
  rebuild_graph();
}

void Sequential::rebuild_graph() {
  if (!sample_shape_) {
    set_graph(graph::Graph(), stack_);
    return;
  }
  graph::Graph graph;
  int tensor = graph.add_input(*sample_shape_, "input_layer");
  for (auto& layer : stack_) {
    layer->build(graph.sample_shape(tensor).with_leading(1), global_random());
    tensor = graph.add_node(*layer, {tensor});
  }
  graph.set_outputs({tensor});
  set_graph(std::move(graph), stack_);
}

nlohmann::json Sequential::to_config() const {
  nlohmann::json layers = nlohmann::json::array();
  if (built()) {
    layers::InputLayer input(input_shape(), "input_layer");
    layers.push_back({{"class_name", "InputLayer"}, {"config", input.get_config()}});
  }
  for (const auto& layer : stack_) {
    layers.push_back(layers::to_config(*layer));
  }
  return {{"class_name", "Sequential"},
          {"config", {{"name", name()}, {"trainable", true}, {"layers", layers}}}};
}

std::unique_ptr<Sequential> Sequential::from_config(const nlohmann::json& model) {
  check_argument(model.is_object() && model.value("class_name", "") == "Sequential",
                 "only Sequential models are supported, got class '" +
                     (model.is_object() ? model.value("class_name", "?") : std::string("?")) + "'");
  const nlohmann::json& config = model.at("config");
  auto result = std::make_unique<Sequential>(std::vector<std::shared_ptr<Layer>>{},
                                             config.value("name", ""));
  for (const nlohmann::json& layer : config.at("layers")) result->add(layers::from_config(layer));
  // Keras 3 writes the input shape as build_input_shape; Keras 2 on the first layer.
  const nlohmann::json* shape = nullptr;
  if (config.contains("build_input_shape")) {
    shape = &config.at("build_input_shape");
  } else if (!config.at("layers").empty() && config.at("layers")[0].at("config").contains("batch_input_shape")) {
    shape = &config.at("layers")[0].at("config").at("batch_input_shape");
  }
  if (!result->built() && shape != nullptr && shape->is_array() && !shape->empty()) {
    std::vector<int64_t> dims;
    for (size_t i = 1; i < shape->size(); ++i) dims.push_back((*shape)[i].get<int64_t>());
    result->build(Shape(dims));
  }
  check_argument(result->built(), "the model config gives no input shape (no InputLayer, no "
                                  "build_input_shape): the model cannot be built");
  return result;
}

}  // namespace tenfold::models
