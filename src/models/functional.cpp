#include "models/functional.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "core/random.h"
#include "layers/input.h"
#include "layers/registry.h"
#include "models/sequential.h"

namespace tenfold::models {

namespace {

using nlohmann::json;

/// Keras' reference to a layer's output: [layer name, node index, tensor index].
json history(const std::string& layer) { return json::array({layer, 0, 0}); }

json batch_shape(const Shape& sample_shape) {
  json dims = json::array({nullptr});
  for (int64_t dim : sample_shape.dims()) dims.push_back(dim);
  return dims;
}

/// One triple, or a list of them when there are several (as Keras 3 writes them).
json histories(const std::vector<std::string>& layers) {
  if (layers.size() == 1) return history(layers[0]);
  json list = json::array();
  for (const std::string& layer : layers) list.push_back(history(layer));
  return list;
}

/// The layer names of input_layers / output_layers, Keras 3's flat triple or a list of triples.
std::vector<std::string> names_of_histories(const json& value, const std::string& key) {
  check_argument(value.is_array() && !value.empty(), "the model config's " + key + " is malformed: " +
                                                         value.dump().substr(0, 200));
  std::vector<std::string> names;
  if (value[0].is_string()) {
    names.push_back(value[0].get<std::string>());
    return names;
  }
  for (const json& entry : value) {
    check_argument(entry.is_array() && !entry.empty() && entry[0].is_string(),
                   "the model config's " + key + " is malformed: " + value.dump().substr(0, 200));
    names.push_back(entry[0].get<std::string>());
  }
  return names;
}

/// The names of the layers a layer's call reads, from its inbound_nodes (Keras 3's
/// {"args", "kwargs"} or Keras 2's nested lists). A layer called more than once shares its
/// weights between the calls, which Tenfold does not do yet.
std::vector<std::string> inbound_layers(const json& layer, const std::string& name) {
  const json& nodes = layer.value("inbound_nodes", json::array());
  check_argument(nodes.is_array(), "layer '" + name + "': inbound_nodes must be a list");
  check_argument(nodes.size() <= 1, "layer '" + name + "' is called " + std::to_string(nodes.size()) +
                                        " times in the model: shared layers are not supported yet");
  std::vector<std::string> names;
  if (nodes.empty()) return names;
  const json& node = nodes[0];
  auto add_reference = [&](const json& reference) {
    // Keras 3: {"class_name": "__keras_tensor__", "config": {"keras_history": [...]}};
    // Keras 2: [layer, node index, tensor index, kwargs].
    const json* history = &reference;
    if (reference.is_object()) {
      check_argument(reference.value("class_name", "") == "__keras_tensor__" && reference.contains("config"),
                     "layer '" + name + "' is called on something other than a tensor: " +
                         reference.dump().substr(0, 200));
      history = &reference.at("config").at("keras_history");
    }
    check_argument(history->is_array() && history->size() >= 3 && (*history)[0].is_string(),
                   "layer '" + name + "' has a malformed input reference: " + reference.dump().substr(0, 200));
    check_argument((*history)[1] == 0 && (*history)[2] == 0,
                   "layer '" + name + "' reads output " + history->dump() +
                       ": only the first call and output of a layer is supported");
    if (history->size() > 3) {
      check_argument((*history)[3].is_null() || (*history)[3].empty(),
                     "layer '" + name + "' is called with arguments " + (*history)[3].dump() +
                         " that Tenfold does not implement");
    }
    names.push_back((*history)[0].get<std::string>());
  };
  if (node.is_object()) {
    const json& args = node.value("args", json::array());
    // A Keras op on tensors (x + y: keras.src.ops.numpy.Add) takes them as positional
    // arguments, a merge layer one list: legacy .h5 files, which name no module, tell them
    // apart this way.
    const bool op = args.size() > 1 && layers::is_tensor_op(layer.value("class_name", ""));
    check_argument(args.size() == 1 || op,
                   "layer '" + name + "' is called with " + std::to_string(args.size()) +
                       " positional arguments; Tenfold calls layers on one tensor or one list");
    const json kwargs = node.value("kwargs", json::object());
    for (const auto& [key, value] : kwargs.items()) {
      // Keras records the training flag a layer saw while the model was built (EfficientNet's
      // Dropout: training=false; the augmentation layers: training=true), but the flag of the
      // model's call wins (measured with Keras 3.15.1: fit trains the Dropout, predict leaves
      // images unaugmented). So a recorded flag changes nothing.
      if (key == "training" && value.is_boolean()) continue;
      check_argument(value.is_null(), "layer '" + name + "' is called with " + key + "=" +
                                          value.dump() + ", which Tenfold does not implement");
    }
    if (op) {
      for (const json& reference : args) add_reference(reference);
    } else if (args[0].is_array()) {
      for (const json& reference : args[0]) add_reference(reference);
    } else {
      add_reference(args[0]);
    }
  } else {
    check_argument(node.is_array(), "layer '" + name + "' has a malformed inbound node");
    for (const json& reference : node) add_reference(reference);
  }
  return names;
}

/// Every input must lead to an output: Keras' "graph disconnected", named.
void check_inputs_connected(const graph::Graph& graph, const std::string& model) {
  const std::vector<std::vector<int>> consumers = graph.consumers();
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const int input = graph.inputs()[i];
    const bool is_output = std::count(graph.outputs().begin(), graph.outputs().end(), input) > 0;
    check_argument(!consumers[size_t(input)].empty() || is_output,
                   "input '" + graph.input_names()[i] + "' of model '" + model +
                       "' is not connected to any output: remove it from the inputs or use it");
  }
}

/// Adds the nodes of `inner`, a model called as layer `name` on the tensors of `reads`, to
/// `graph` (with its layers to `layers`); returns the tensor of its output.
int inline_model(const Model& inner, const std::string& name, const std::vector<std::string>& reads,
                 const std::map<std::string, int>& tensor_of, graph::Graph& graph,
                 std::vector<std::shared_ptr<Layer>>& layers) {
  const graph::Graph& nodes = inner.graph();
  check_argument(reads.size() == nodes.inputs().size() && nodes.outputs().size() == 1,
                 "model '" + name + "' used as a layer must take the tensors it is called on (" +
                     std::to_string(reads.size()) + ") and give one output");
  std::map<int, int> outer;  // inner tensor -> outer tensor
  for (size_t i = 0; i < reads.size(); ++i) {
    const int tensor = tensor_of.at(reads[i]);
    check_argument(graph.sample_shape(tensor) == nodes.sample_shape(nodes.inputs()[i]),
                   "model '" + name + "' takes inputs " +
                       nodes.sample_shape(nodes.inputs()[i]).with_leading(0).to_string(true) + " but is called on '" +
                       reads[i] + "' " + graph.sample_shape(tensor).with_leading(0).to_string(true));
    outer[nodes.inputs()[i]] = tensor;
  }
  for (const graph::Node& node : nodes.nodes()) {
    std::vector<int> inputs;
    for (int input : node.inputs) inputs.push_back(outer.at(input));
    outer[node.output] = graph.add_node(*node.layer, std::move(inputs));
    layers.push_back(node.layer->shared_from_this());
  }
  return outer.at(nodes.outputs()[0]);
}

}  // namespace

Functional::Functional(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs,
                       const std::string& name)
    : Model(name, "functional") {
  check_argument(!inputs.empty() && !outputs.empty(), "a Functional model needs inputs and outputs");
  graph::Graph graph;
  std::map<const void*, int> tensor_ids;
  for (const KerasTensor& input : inputs) {
    check_argument(input.is_input(), "the model's inputs must be layers::Input tensors; '" +
                                         input.layer()->name() + "' is the output of a layer");
    tensor_ids[input.identity()] = graph.add_input(input.shape(), input.layer()->name());
  }
  // Each layer call after the calls it reads: a depth-first walk back from the outputs.
  std::vector<std::shared_ptr<Layer>> layers;
  std::set<const Layer*> called;
  std::set<const void*> visiting;
  auto visit = [&](auto& self, const KerasTensor& tensor) -> int {
    if (auto found = tensor_ids.find(tensor.identity()); found != tensor_ids.end()) return found->second;
    check_argument(!tensor.is_input(), "the outputs depend on input '" + tensor.layer()->name() +
                                           "', which is not among the model's inputs: pass it in "
                                           "inputs");
    std::vector<int> input_ids;
    for (const KerasTensor& input : tensor.inputs()) input_ids.push_back(self(self, input));
    check_argument(called.insert(tensor.layer().get()).second,
                   "layer '" + tensor.layer()->name() + "' is called more than once in the model: "
                   "shared layers are not supported yet");
    layers.push_back(tensor.layer());
    int id = graph.add_node(*tensor.layer(), input_ids);
    calls_.push_back({{tensor.layer(), nullptr}, std::move(input_ids), id});
    tensor_ids[tensor.identity()] = id;
    return id;
  };
  std::vector<int> output_ids;
  for (const KerasTensor& output : outputs) output_ids.push_back(visit(visit, output));
  graph.set_outputs(std::move(output_ids));
  check_inputs_connected(graph, this->name());
  set_graph(std::move(graph), std::move(layers));
}

json Functional::to_config() const {
  const graph::Graph& graph = this->graph();
  json layers = json::array();
  std::vector<std::string> tensor_layer(size_t(graph.num_tensors()));
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const int input = graph.inputs()[i];
    const std::string& name = graph.input_names()[i];
    tensor_layer[size_t(input)] = name;
    layers::InputLayer layer(graph.sample_shape(input), name);
    layers.push_back({{"class_name", "InputLayer"}, {"config", layer.get_config()}, {"name", name},
                      {"inbound_nodes", json::array()}});
  }
  for (const Call& call : calls_) {
    tensor_layer[size_t(call.output)] = call.member.name();
    json arguments = json::array();
    for (int input : call.inputs) {
      arguments.push_back({{"class_name", "__keras_tensor__"},
                           {"config", {{"shape", batch_shape(graph.sample_shape(input))},
                                       {"dtype", "float32"},
                                       {"keras_history", history(tensor_layer[size_t(input)])}}}});
    }
    const bool list = call.member.layer && call.member.layer->takes_input_list();
    json entry = call.member.layer
                     ? layers::to_config(*call.member.layer)
                     : call.member.model->to_config();
    entry["name"] = call.member.name();
    entry["inbound_nodes"] = json::array({{{"args", list ? json::array({arguments}) : arguments},
                                           {"kwargs", json::object()}}});
    layers.push_back(entry);
  }
  std::vector<std::string> inputs, outputs;
  for (int input : graph.inputs()) inputs.push_back(tensor_layer[size_t(input)]);
  for (int output : graph.outputs()) outputs.push_back(tensor_layer[size_t(output)]);
  return {{"class_name", "Functional"},
          {"config", {{"name", name()}, {"trainable", true}, {"layers", layers},
                      {"input_layers", histories(inputs)}, {"output_layers", histories(outputs)}}}};
}

std::unique_ptr<Functional> Functional::from_config(const json& model) {
  const json& config = model.at("config");
  check_argument(config.is_object() && config.contains("layers") && config.at("layers").is_array(),
                 "the Functional model config has no list of layers");
  auto result = std::unique_ptr<Functional>(new Functional(config.value("name", "")));
  graph::Graph graph;
  std::vector<std::shared_ptr<Layer>> layers;
  std::map<std::string, int> tensor_of;  // layer name -> its output tensor
  std::vector<std::string> input_names = names_of_histories(config.at("input_layers"), "input_layers");
  std::vector<std::string> output_names = names_of_histories(config.at("output_layers"), "output_layers");

  // Layers are added in the config's order (Keras writes a topological one); a layer whose
  // inputs are not there yet waits for a later pass. A pass that adds nothing means a cycle
  // or a missing layer.
  struct Pending {
    std::string name;
    const json* entry;
    std::vector<std::string> reads;
  };
  std::vector<Pending> pending;
  std::set<std::string> defined;
  for (const json& entry : config.at("layers")) {
    check_argument(entry.is_object() && entry.contains("config"), "a layer of the model config is malformed: " +
                                                                      entry.dump().substr(0, 200));
    std::string name = entry.contains("name") ? entry.at("name").get<std::string>()
                                              : entry.at("config").value("name", "");
    check_argument(defined.insert(name).second, "the model config defines layer '" + name + "' twice");
    pending.push_back({name, &entry, inbound_layers(entry, name)});
  }
  for (const Pending& layer : pending) {
    for (const std::string& read : layer.reads) {
      check_argument(defined.count(read) == 1, "layer '" + layer.name + "' reads '" + read +
                                                   "', which the model config does not define");
    }
  }
  std::vector<std::string> graph_input_names;
  while (!pending.empty()) {
    std::vector<Pending> waiting;
    for (Pending& layer : pending) {
      bool ready = std::all_of(layer.reads.begin(), layer.reads.end(),
                               [&](const std::string& read) { return tensor_of.count(read) == 1; });
      if (!ready) {
        waiting.push_back(std::move(layer));
        continue;
      }
      const std::string class_name = layer.entry->value("class_name", "");
      if (class_name == "Sequential" || class_name == "Functional" || class_name == "Model") {
        std::shared_ptr<const Model> inner = models::from_config(*layer.entry);
        std::vector<int> inputs;
        for (const std::string& read : layer.reads) inputs.push_back(tensor_of.at(read));
        tensor_of[layer.name] = inline_model(*inner, layer.name, layer.reads, tensor_of, graph, layers);
        result->calls_.push_back({{nullptr, inner}, std::move(inputs), tensor_of[layer.name]});
        continue;
      }
      std::shared_ptr<Layer> built = layers::from_config(*layer.entry);
      if (auto input = std::dynamic_pointer_cast<layers::InputLayer>(built)) {
        check_argument(std::count(input_names.begin(), input_names.end(), layer.name) == 1,
                       "InputLayer '" + layer.name + "' is not among the model's input_layers");
        tensor_of[layer.name] = graph.add_input(input->sample_shape(), layer.name);
        continue;
      }
      check_argument(!layer.reads.empty(), "layer '" + layer.name + "' is called on no input: "
                                           "every layer of a Functional model must read a tensor");
      std::vector<int> inputs;
      std::vector<Shape> shapes;
      for (const std::string& read : layer.reads) {
        inputs.push_back(tensor_of.at(read));
        shapes.push_back(graph.sample_shape(inputs.back()).with_leading(1));
      }
      built->build_for(shapes, global_random());
      tensor_of[layer.name] = graph.add_node(*built, inputs);
      result->calls_.push_back({{built, nullptr}, std::move(inputs), tensor_of[layer.name]});
      layers.push_back(std::move(built));
    }
    if (waiting.size() == pending.size()) {
      std::string names;
      for (const Pending& layer : waiting) names += (names.empty() ? "'" : ", '") + layer.name + "'";
      throw Error(ErrorCode::invalid_argument,
                  "the model config's graph has a cycle: layers " + names + " each wait on another");
    }
    pending = std::move(waiting);
  }
  // Inputs in input_layers' order.
  check_argument(graph.inputs().size() == input_names.size(),
                 "the model config lists " + std::to_string(input_names.size()) + " input layers but defines " +
                     std::to_string(graph.inputs().size()) + " InputLayers");
  std::vector<int> outputs;
  for (const std::string& name : output_names) {
    check_argument(tensor_of.count(name) == 1, "output layer '" + name + "' is not in the model config");
    outputs.push_back(tensor_of.at(name));
  }
  graph.set_outputs(outputs);
  graph.order_inputs(input_names);
  check_inputs_connected(graph, result->name());
  std::vector<Member> members;  // Keras' model.layers: what the calls call
  for (const Call& call : result->calls_) members.push_back(call.member);
  result->set_graph(std::move(graph), std::move(layers), std::move(members));
  return result;
}

std::unique_ptr<Model> from_config(const json& model) {
  check_argument(model.is_object() && model.contains("config"),
                 "a model config needs 'class_name' and 'config', got " + model.dump().substr(0, 200));
  const std::string class_name = model.value("class_name", "?");
  if (class_name == "Sequential") return Sequential::from_config(model);
  if (class_name == "Functional" || class_name == "Model") return Functional::from_config(model);
  throw Error(ErrorCode::invalid_argument, "model class '" + class_name +
                                               "' is not supported: Tenfold loads Sequential and "
                                               "Functional models");
}

}  // namespace tenfold::models
