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

/// A tensor of a Keras config: the output of call `call` of layer `layer` (Keras' keras_history
/// [layer, node index, tensor index], counting only this model's calls).
struct TensorReference {
  std::string layer;
  int call = 0;
  auto operator<=>(const TensorReference&) const = default;
  std::string to_string() const { return "'" + layer + "'" + (call > 0 ? " (call " + std::to_string(call + 1) + ")" : ""); }
};

json history(const TensorReference& tensor) { return json::array({tensor.layer, tensor.call, 0}); }

/// Keras 3 counts a nested Functional model's calls from 1 in output_layers (its own graph is
/// its call 0 there) but from 0 in inbound_nodes; a nested Sequential's from 0 in both.
bool counts_calls_from_one(const std::string& class_name) { return class_name == "Functional" || class_name == "Model"; }

json batch_shape(const Shape& sample_shape) {
  json dims = json::array({nullptr});
  for (int64_t dim : sample_shape.dims()) dims.push_back(dim);
  return dims;
}

/// One triple, or a list of them when there are several (as Keras 3 writes them).
json histories(const std::vector<TensorReference>& tensors) {
  if (tensors.size() == 1) return history(tensors[0]);
  json list = json::array();
  for (const TensorReference& tensor : tensors) list.push_back(history(tensor));
  return list;
}

/// Reads a keras_history [layer, node index, tensor index, (Keras 2's kwargs)]; `what` names
/// where it is for errors.
TensorReference read_history(const json& history, const std::string& what) {
  check_argument(history.is_array() && history.size() >= 3 && history[0].is_string() &&
                     history[1].is_number_integer() && history[1].get<int>() >= 0 && history[2].is_number_integer(),
                 what + " has a malformed tensor reference: " + history.dump().substr(0, 200));
  check_argument(history[2] == 0, what + " reads output " + history.dump() +
                                      ": Tenfold's layers have one output (tensor index 0)");
  return {history[0].get<std::string>(), history[1].get<int>()};
}

/// The tensors of input_layers / output_layers, Keras 3's flat triple or a list of triples.
std::vector<TensorReference> references_of_histories(const json& value, const std::string& key) {
  check_argument(value.is_array() && !value.empty(), "the model config's " + key + " is malformed: " +
                                                         value.dump().substr(0, 200));
  if (value[0].is_string()) return {read_history(value, "the model config's " + key)};
  std::vector<TensorReference> tensors;
  for (const json& entry : value) tensors.push_back(read_history(entry, "the model config's " + key));
  return tensors;
}

/// What each call of a layer reads, from its inbound_nodes (Keras 3's {"args", "kwargs"} or
/// Keras 2's nested lists): one list of tensors per call. A layer called more than once
/// (shared) uses its weights in every call.
std::vector<std::vector<TensorReference>> inbound_calls(const json& layer, const std::string& name) {
  const json& nodes = layer.value("inbound_nodes", json::array());
  check_argument(nodes.is_array(), "layer '" + name + "': inbound_nodes must be a list");
  std::vector<std::vector<TensorReference>> calls;
  for (const json& node : nodes) {
    std::vector<TensorReference> reads;
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
      reads.push_back(read_history(*history, "layer '" + name + "'"));
      if (history->size() > 3) {
        check_argument((*history)[3].is_null() || (*history)[3].empty(),
                       "layer '" + name + "' is called with arguments " + (*history)[3].dump() +
                           " that Tenfold does not implement");
      }
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
    calls.push_back(std::move(reads));
  }
  return calls;
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

/// Adds the nodes of `inner`, a model called as a layer on tensors `inputs`, to `graph`
/// (its layers to `layers`); returns the tensor of its output.
int inline_model(const Model& inner, const std::vector<int>& inputs, graph::Graph& graph,
                 std::vector<std::shared_ptr<Layer>>& layers) {
  const graph::Graph& nodes = inner.graph();
  std::vector<Shape> shapes;
  for (int input : inputs) shapes.push_back(graph.sample_shape(input));
  inner.check_call(shapes);
  std::map<int, int> outer;  // inner tensor -> outer tensor
  for (size_t i = 0; i < inputs.size(); ++i) outer[nodes.inputs()[i]] = inputs[i];
  for (const graph::Node& node : nodes.nodes()) {
    std::vector<int> node_inputs;
    for (int input : node.inputs) node_inputs.push_back(outer.at(input));
    outer[node.output] = graph.add_node(*node.layer, std::move(node_inputs));
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
                                         input.caller().name() + "' is the output of a layer");
    tensor_ids[input.identity()] = graph.add_input(input.shape(), input.caller().name());
  }
  // Each layer call after the calls it reads: a depth-first walk back from the outputs. A
  // layer called on several tensors is one call each; a model called as a layer is inlined.
  std::vector<std::shared_ptr<Layer>> layers;
  std::vector<Call> calls;
  auto visit = [&](auto& self, const KerasTensor& tensor) -> int {
    if (auto found = tensor_ids.find(tensor.identity()); found != tensor_ids.end()) return found->second;
    check_argument(!tensor.is_input(), "the outputs depend on input '" + tensor.caller().name() +
                                           "', which is not among the model's inputs: pass it in "
                                           "inputs");
    std::vector<int> input_ids;
    for (const KerasTensor& input : tensor.inputs()) input_ids.push_back(self(self, input));
    int id = -1;
    const Caller& caller = tensor.caller();
    if (caller.model) {
      id = inline_model(*caller.model, input_ids, graph, layers);
    } else {
      layers.push_back(caller.layer);
      id = graph.add_node(*caller.layer, input_ids);
    }
    calls.push_back({caller, std::move(input_ids), id});
    tensor_ids[tensor.identity()] = id;
    return id;
  };
  std::vector<int> output_ids;
  for (const KerasTensor& output : outputs) output_ids.push_back(visit(visit, output));
  graph.set_outputs(std::move(output_ids));
  check_inputs_connected(graph, this->name());
  set_graph(std::move(graph), std::move(layers), std::move(calls));
}

json Functional::to_config() const {
  const graph::Graph& graph = this->graph();
  json layers = json::array();
  std::vector<TensorReference> tensor_reference(size_t(graph.num_tensors()));
  std::vector<const Member*> maker(size_t(graph.num_tensors()), nullptr);  // null for an input
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const int input = graph.inputs()[i];
    const std::string& name = graph.input_names()[i];
    tensor_reference[size_t(input)] = {name, 0};
    layers::InputLayer layer(graph.sample_shape(input), name);
    layers.push_back({{"class_name", "InputLayer"}, {"config", layer.get_config()}, {"name", name},
                      {"inbound_nodes", json::array()}});
  }
  // One entry per member, in the order of its first call, with an inbound node per call.
  std::map<std::string, size_t> entry_of;
  for (const Call& call : calls()) {
    const std::string& name = call.member.name();
    auto [found, first_call] = entry_of.try_emplace(name, layers.size());
    if (first_call) {
      json entry = call.member.layer ? layers::to_config(*call.member.layer) : call.member.model->to_config();
      entry["name"] = name;
      entry["inbound_nodes"] = json::array();
      layers.push_back(entry);
    }
    json& inbound_nodes = layers[found->second]["inbound_nodes"];
    tensor_reference[size_t(call.output)] = {name, int(inbound_nodes.size())};
    maker[size_t(call.output)] = &call.member;
    json arguments = json::array();
    for (int input : call.inputs) {
      arguments.push_back({{"class_name", "__keras_tensor__"},
                           {"config", {{"shape", batch_shape(graph.sample_shape(input))},
                                       {"dtype", "float32"},
                                       {"keras_history", history(tensor_reference[size_t(input)])}}}});
    }
    const bool list = call.member.layer && call.member.layer->takes_input_list();
    inbound_nodes.push_back({{"args", list ? json::array({arguments}) : arguments}, {"kwargs", json::object()}});
  }
  std::vector<TensorReference> inputs, outputs;
  for (int input : graph.inputs()) inputs.push_back(tensor_reference[size_t(input)]);
  for (int output : graph.outputs()) {
    TensorReference reference = tensor_reference[size_t(output)];
    const Member* made_by = maker[size_t(output)];
    if (made_by && made_by->model && counts_calls_from_one(made_by->class_name())) ++reference.call;
    outputs.push_back(reference);
  }
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
  std::vector<Call> calls;
  std::map<TensorReference, int> tensor_of;  // a call's output -> its tensor
  const std::vector<TensorReference> input_tensors = references_of_histories(config.at("input_layers"), "input_layers");
  const std::vector<TensorReference> output_tensors = references_of_histories(config.at("output_layers"), "output_layers");
  std::vector<std::string> input_names;
  for (const TensorReference& input : input_tensors) input_names.push_back(input.layer);

  // Calls are made in the config's order (Keras writes a topological one); a call whose
  // inputs are not there yet, or whose layer's previous call is not, waits for a later pass.
  // A pass that makes nothing means a cycle or a missing layer.
  struct Pending {
    std::string name;
    const json* entry;
    int call;
    std::vector<TensorReference> reads;
  };
  std::vector<Pending> pending;
  std::map<std::string, size_t> call_counts;
  std::map<std::string, std::string> class_of;
  for (const json& entry : config.at("layers")) {
    check_argument(entry.is_object() && entry.contains("config"), "a layer of the model config is malformed: " +
                                                                      entry.dump().substr(0, 200));
    std::string name = entry.contains("name") ? entry.at("name").get<std::string>()
                                              : entry.at("config").value("name", "");
    check_argument(call_counts.count(name) == 0, "the model config defines layer '" + name + "' twice");
    std::vector<std::vector<TensorReference>> layer_calls = inbound_calls(entry, name);
    if (layer_calls.empty()) layer_calls.emplace_back();  // an InputLayer, or a layer called on nothing
    call_counts[name] = layer_calls.size();
    class_of[name] = entry.value("class_name", "");
    for (size_t k = 0; k < layer_calls.size(); ++k) pending.push_back({name, &entry, int(k), std::move(layer_calls[k])});
  }
  for (const Pending& call : pending) {
    for (const TensorReference& read : call.reads) {
      check_argument(call_counts.count(read.layer) == 1, "layer '" + call.name + "' reads '" + read.layer +
                                                             "', which the model config does not define");
      check_argument(size_t(read.call) < call_counts.at(read.layer),
                     "layer '" + call.name + "' reads call " + std::to_string(read.call + 1) + " of '" + read.layer +
                         "', which the model config calls " + std::to_string(call_counts.at(read.layer)) + " time(s)");
    }
  }
  std::map<std::string, std::shared_ptr<Layer>> made_layers;
  std::map<std::string, std::shared_ptr<const Model>> made_models;
  while (!pending.empty()) {
    std::vector<Pending> waiting;
    for (Pending& call : pending) {
      bool ready = (call.call == 0 || tensor_of.count({call.name, call.call - 1}) == 1) &&
                   std::all_of(call.reads.begin(), call.reads.end(),
                               [&](const TensorReference& read) { return tensor_of.count(read) == 1; });
      if (!ready) {
        waiting.push_back(std::move(call));
        continue;
      }
      std::vector<int> inputs;
      for (const TensorReference& read : call.reads) inputs.push_back(tensor_of.at(read));
      const TensorReference made{call.name, call.call};
      const std::string class_name = call.entry->value("class_name", "");
      if (class_name == "Sequential" || class_name == "Functional" || class_name == "Model") {
        std::shared_ptr<const Model>& inner = made_models[call.name];
        if (!inner) inner = models::from_config(*call.entry);
        tensor_of[made] = inline_model(*inner, inputs, graph, layers);
        calls.push_back({{nullptr, inner}, std::move(inputs), tensor_of[made]});
        continue;
      }
      std::shared_ptr<Layer>& layer = made_layers[call.name];
      if (!layer) layer = layers::from_config(*call.entry);
      if (auto input = std::dynamic_pointer_cast<layers::InputLayer>(layer)) {
        check_argument(std::count(input_names.begin(), input_names.end(), call.name) == 1,
                       "InputLayer '" + call.name + "' is not among the model's input_layers");
        tensor_of[made] = graph.add_input(input->sample_shape(), call.name);
        continue;
      }
      check_argument(!call.reads.empty(), "layer '" + call.name + "' is called on no input: "
                                          "every layer of a Functional model must read a tensor");
      std::vector<Shape> shapes;
      for (int input : inputs) shapes.push_back(graph.sample_shape(input).with_leading(1));
      layer->build_for(shapes, global_random());  // a shared layer's later calls check the shapes
      tensor_of[made] = graph.add_node(*layer, inputs);
      calls.push_back({{layer, nullptr}, std::move(inputs), tensor_of[made]});
      layers.push_back(layer);
    }
    if (waiting.size() == pending.size()) {
      std::string names;
      for (const Pending& call : waiting) names += (names.empty() ? "" : ", ") + TensorReference{call.name, call.call}.to_string();
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
  for (TensorReference output : output_tensors) {
    if (counts_calls_from_one(class_of[output.layer]) && output.call > 0) --output.call;
    check_argument(tensor_of.count(output) == 1, "output layer " + output.to_string() + " is not in the model config");
    outputs.push_back(tensor_of.at(output));
  }
  graph.set_outputs(outputs);
  graph.order_inputs(input_names);
  check_inputs_connected(graph, result->name());
  result->set_graph(std::move(graph), std::move(layers), std::move(calls));
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
