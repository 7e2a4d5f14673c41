#pragma once
// A model as a graph of layer calls, the structure every model kind compiles from: nodes are
// layer calls reading any number of tensors and writing one; tensors are the model's inputs
// and the nodes' outputs. Nodes are kept in a topological order (each after the nodes that
// make its inputs), which is the order a step runs them forward.
#include <string>
#include <vector>

#include "core/shape.h"
#include "layers/layer.h"

namespace tenfold::graph {

struct Node {
  Layer* layer;
  std::vector<int> inputs;  // tensor ids
  int output;               // tensor id
};

class Graph {
 public:
  /// A model input of samples of `sample_shape`. Returns its tensor id.
  int add_input(const Shape& sample_shape, const std::string& name);
  /// `layer` (built) called on tensors `inputs`, all added before. Returns the output's id.
  int add_node(Layer& layer, std::vector<int> inputs);
  void set_outputs(std::vector<int> outputs);
  /// Puts the inputs in the order of `names` (a Keras config lists its input layers apart
  /// from the order it defines them in).
  void order_inputs(const std::vector<std::string>& names);

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<int>& outputs() const { return outputs_; }
  int num_tensors() const { return int(shapes_.size()); }
  /// Shape of one sample of a tensor (no batch dimension).
  const Shape& sample_shape(int tensor) const { return shapes_.at(size_t(tensor)); }
  /// The node that makes a tensor, or -1 for a model input.
  int producer(int tensor) const { return producers_.at(size_t(tensor)); }
  /// Per tensor, the nodes that read it (a node reading it twice is listed twice).
  std::vector<std::vector<int>> consumers() const;

 private:
  std::vector<Node> nodes_;
  std::vector<Shape> shapes_;
  std::vector<int> producers_;
  std::vector<int> inputs_, outputs_;
  std::vector<std::string> input_names_;
};

}  // namespace tenfold::graph
