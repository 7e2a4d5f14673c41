#include "graph/graph.h"

#include <algorithm>

#include "core/error.h"

namespace tenfold::graph {

int Graph::add_input(const Shape& sample_shape, const std::string& name) {
  shapes_.push_back(sample_shape);
  producers_.push_back(-1);
  inputs_.push_back(num_tensors() - 1);
  input_names_.push_back(name);
  return num_tensors() - 1;
}

int Graph::add_node(Layer& layer, std::vector<int> inputs) {
  std::vector<Shape> shapes;
  for (int input : inputs) {
    check_argument(input >= 0 && input < num_tensors(), "layer '" + layer.name() +
                                                            "' reads a tensor the graph does not have");
    shapes.push_back(sample_shape(input).with_leading(1));
  }
  shapes_.push_back(layer.output_shape_for(shapes).without_batch());
  producers_.push_back(int(nodes_.size()));
  nodes_.push_back({&layer, std::move(inputs), num_tensors() - 1});
  return num_tensors() - 1;
}

void Graph::set_outputs(std::vector<int> outputs) {
  check_argument(!outputs.empty(), "a model needs at least one output");
  outputs_ = std::move(outputs);
}

void Graph::order_inputs(const std::vector<std::string>& names) {
  std::vector<int> inputs;
  for (const std::string& name : names) {
    auto found = std::find(input_names_.begin(), input_names_.end(), name);
    check_argument(found != input_names_.end(), "the model has no input named '" + name + "'");
    inputs.push_back(inputs_[size_t(found - input_names_.begin())]);
  }
  check_argument(inputs.size() == inputs_.size(), "the model's inputs are listed " +
                                                      std::to_string(names.size()) + " times for " +
                                                      std::to_string(inputs_.size()) + " inputs");
  inputs_ = std::move(inputs);
  input_names_ = names;
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> result(static_cast<size_t>(num_tensors()));
  for (size_t n = 0; n < nodes_.size(); ++n) {
    for (int input : nodes_[n].inputs) result[size_t(input)].push_back(int(n));
  }
  return result;
}

}  // namespace tenfold::graph
