#include "io/model_file.h"

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/hdf5.h"
#include "io/stored_file.h"
#include "io/zip_archive.h"
#include "losses/loss.h"
#include "metrics/metric.h"
#include "optimizers/optimizer.h"

namespace tenfold::io {

namespace {

using nlohmann::json;

// The Keras release whose file layout this follows (checked against its files in tests).
constexpr const char* keras_version = "3.15.1";
// Deeper JSON than any real model config: a file nesting more is refused, not recursed into.
constexpr int max_config_depth = 64;

// Keras' .keras archive may hold at most this much weight data here.
constexpr uint64_t max_archive_entry_bytes = uint64_t(1) << 34;

enum class Format { h5, keras, weights };

Format format_of(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".weights.h5")) return Format::weights;
  if (ends_with(".h5") || ends_with(".hdf5")) return Format::h5;
  if (ends_with(".keras")) return Format::keras;
  throw Error(ErrorCode::invalid_argument,
              "cannot tell the format of '" + path + "' from its extension: use .keras (Keras 3), "
              ".h5 (Keras' HDF5 model file) or .weights.h5 (weights only)");
}

void check_h5(const std::string& path) {
  check_argument(format_of(path) == Format::h5, "'" + path + "' must be a Keras .h5 model file");
}

/// Keras' default optimizer names, which name the optimizer's group in the file.
std::string keras_optimizer_name(const std::string& class_name) {
  if (class_name == "Adam") return "adam";
  if (class_name == "RMSprop") return "rmsprop";
  return class_name;  // SGD
}

/// The number of Keras optimizer variables before the slots: iteration, and learning_rate
/// unless the learning rate is a schedule (Keras then keeps no variable of it).
size_t optimizer_scalars(const optimizers::Optimizer& optimizer) {
  return optimizer.learning_rate_schedule() ? 1 : 2;
}

/// An optimizer variable as Keras stores it: a slot in Keras' layout of its weight.
Tensor keras_value(const optimizers::KerasVariable& variable, const std::vector<Variable*>& weights) {
  return variable.variable ? weights[*variable.variable]->to_keras_layout(*variable.value) : *variable.value;
}

/// Reads a stored optimizer variable into `variable`.
void read_keras_value(const StoredGroup& group, const std::string& name, const optimizers::KerasVariable& variable,
                      const std::vector<Variable*>& weights) {
  if (!variable.variable) {
    Tensor value = group.read_dataset(name, variable.value->shape());
    std::memcpy(variable.value->raw_data(), value.raw_data(), value.num_bytes());
    return;
  }
  Variable& weight = *weights[*variable.variable];
  weight.from_keras_layout(group.read_dataset(name, weight.shape()), *variable.value);
}

/// A loss as Keras serializes it; `module` names where Keras 3 finds its class (.keras files).
json loss_config(const losses::Loss& loss, bool with_module) {
  json result = {{"class_name", loss.class_name()}, {"config", loss.get_config()}};
  if (with_module) {
    result["module"] = "keras.losses";
    result["registered_name"] = nullptr;
  }
  return result;
}

/// Metrics as Keras serializes them; `with_module` adds where Keras 3 finds a metric object's
/// class (.keras files).
json keras_metrics(const std::vector<json>& metrics, bool with_module) {
  json result = json::array();
  for (json metric : metrics) {
    if (with_module && metric.is_object() && !metric.contains("module")) {
      metric["module"] = "keras.metrics";
      metric["registered_name"] = nullptr;
    }
    result.push_back(metric);
  }
  return result;
}

/// Keras' compile arguments: one loss and metric list, or with several outputs dicts keyed by
/// output name (loss, loss_weights, metrics).
json training_config(const models::Model& model, bool with_module = false) {
  const std::vector<models::OutputTraining>& outputs = model.output_training();
  json loss, loss_weights, metrics;
  if (outputs.size() == 1) {
    loss = loss_config(*outputs[0].loss, with_module);
    metrics = keras_metrics(outputs[0].metrics, with_module);
  } else {
    const std::vector<std::string> names = model.output_names();
    for (size_t k = 0; k < outputs.size(); ++k) {
      loss[names[k]] = loss_config(*outputs[k].loss, with_module);
      loss_weights[names[k]] = outputs[k].weight;
      if (!outputs[k].metrics.empty()) metrics[names[k]] = keras_metrics(outputs[k].metrics, with_module);
    }
  }
  json optimizer = model.optimizer()->get_config();
  optimizer["name"] = keras_optimizer_name(model.optimizer()->class_name());
  return {{"loss", loss},
          {"loss_weights", loss_weights},
          {"metrics", metrics},
          {"weighted_metrics", nullptr},
          {"run_eagerly", false},
          {"steps_per_execution", 1},
          {"jit_compile", false},
          {"optimizer_config", {{"class_name", model.optimizer()->class_name()}, {"config", optimizer}}}};
}

/// What Keras' HDF5 prefixes a member's weight names with: the model's name for a layer, the
/// nested model's own name for its layers ("features/conv2d/kernel").
const std::string& weight_prefix(const models::Model& model, const models::Model::Member& member) {
  return member.model ? member.name() : model.name();
}

/// The weights of a member of Keras' model.layers (a layer, or a nested model's layers), with
/// their HDF5 names <prefix>/<layer>/<weight>.
std::vector<std::pair<std::string, Variable*>> member_weights(const models::Model& model,
                                                               const models::Model::Member& member) {
  const std::string& prefix = weight_prefix(model, member);
  std::vector<std::pair<std::string, Variable*>> weights;
  for (Layer* layer : member.layers()) {
    for (Variable* weight : layer->weights()) weights.emplace_back(prefix + "/" + layer->name() + "/" + weight->name(), weight);
  }
  return weights;
}

/// A weight as Keras stores it: in Keras' layout as `dtype` (float32, or a bfloat16
/// variable's own dtype in Keras 3 files), or an int64 scalar for Keras' integer variables
/// (Normalization's count).
void write_weight(const Hdf5Object& group, const std::string& name, const Variable& weight, DType dtype) {
  Tensor value = weight.read();
  if (weight.integer()) {
    group.write_int64_scalar(name, int64_t(value.data<float>()[0]));
  } else {
    group.write_dataset(name, value.shape(), value.data<float>(), dtype);
  }
}

/// The dtype a Keras 3 file stores an optimizer variable in: its weight's (Keras makes slots
/// like their variables).
DType stored_dtype(const optimizers::KerasVariable& variable, const std::vector<Variable*>& weights) {
  return variable.variable ? weights[*variable.variable]->dtype() : DType::float32;
}

void read_weight(const StoredGroup& group, const std::string& name, Variable& weight) {
  if (weight.integer()) {
    Tensor value(Shape{});
    value.data<float>()[0] = float(group.read_int64_scalar(name));
    weight.assign(value);
  } else {
    weight.assign(group.read_dataset(name, weight.shape()));
  }
}

void write_weights(const models::Model& model, const Hdf5Object& file) {
  Hdf5Object group = file.create_group("model_weights");
  group.write_string_attribute("backend", "tensorflow");
  group.write_string_attribute("keras_version", keras_version);
  std::vector<std::string> layer_names;
  for (const auto& member : model.members()) layer_names.push_back(member.name());
  group.write_string_array_attribute("layer_names", layer_names);
  for (const auto& member : model.members()) {
    Hdf5Object member_group = group.create_group(member.name());
    std::vector<std::pair<std::string, Variable*>> weights = member_weights(model, member);
    std::vector<std::string> names;
    if (!weights.empty()) {
      // Datasets at <prefix>/<layer>/<weight> inside the member's group.
      Hdf5Object prefix_group = member_group.create_group(weight_prefix(model, member));
      for (Layer* layer : member.layers()) {
        if (layer->weights().empty()) continue;
        Hdf5Object layer_group = prefix_group.create_group(layer->name());
        for (const Variable* weight : std::as_const(*layer).weights()) {
          // float32 even for a bfloat16 variable: Keras cannot load the 2-byte opaque values
          // it writes in .h5 files, and float32 holds every bfloat16 exactly.
          write_weight(layer_group, weight->name(), *weight, DType::float32);
        }
      }
      for (const auto& [name, weight] : weights) names.push_back(name);
    }
    member_group.write_string_array_attribute("weight_names", names);
  }
  group.create_group("top_level_model_weights").write_string_array_attribute("weight_names", {});
}

void write_optimizer(const models::Model& model, const Hdf5Object& file) {
  optimizers::Optimizer& optimizer = *model.optimizer();
  std::string prefix = keras_optimizer_name(optimizer.class_name());
  Hdf5Object group = file.create_group("optimizer_weights");
  Hdf5Object slots = group.create_group(prefix);
  std::vector<std::string> names = {prefix + "/iteration"};
  slots.write_int64_scalar("iteration", optimizer.iterations());
  if (!optimizer.learning_rate_schedule()) {
    float learning_rate = optimizer.learning_rate();
    slots.write_dataset("learning_rate", Shape{}, &learning_rate);
    names.push_back(prefix + "/learning_rate");
  }
  std::vector<std::string> prefixes;  // <model>_<layer>_<weight>, per trainable variable
  std::vector<Variable*> weights;
  const std::vector<Variable*> trainable = model.trainable_weights();
  for (const auto& member : model.members()) {
    for (auto [name, weight] : member_weights(model, member)) {
      if (std::find(trainable.begin(), trainable.end(), weight) == trainable.end()) continue;
      std::replace(name.begin(), name.end(), '/', '_');
      prefixes.push_back(name);
      weights.push_back(weight);
    }
  }
  for (const optimizers::KerasVariable& variable : optimizer.keras_variables()) {
    std::string name = variable.variable ? prefixes[*variable.variable] + "_" + variable.name : variable.name;
    Tensor value = keras_value(variable, weights);
    slots.write_dataset(name, value.shape(), value.data<float>());
    names.push_back(prefix + "/" + name);
  }
  group.write_string_array_attribute("weight_names", names);
}

json parse_config(const std::string& text, const std::string& where) {
  try {
    return json::parse(text, [&](int depth, json::parse_event_t, json&) {
      if (depth > max_config_depth) {
        throw Error(ErrorCode::data_loss, where + " nests deeper than " +
                                              std::to_string(max_config_depth) + " levels: not a model config");
      }
      return true;
    });
  } catch (const json::exception& error) {
    throw Error(ErrorCode::data_loss, where + " is not valid JSON: " + error.what());
  }
}

/// Members (Keras' model.layers) with weights are matched in order, as Keras' HDF5 loader
/// does (names differ when the same architecture was built after other models in a process).
void read_weights(models::Model& model, const StoredGroup& file) {
  const StoredGroup& group = file.open_group("model_weights");
  std::vector<const StoredGroup*> file_layers;  // the file's layers that hold weights, in order
  std::vector<std::vector<std::string>> file_weight_names;
  for (const std::string& name : group.read_string_array_attribute("layer_names")) {
    const StoredGroup& layer_group = group.open_group(name);
    std::vector<std::string> names = layer_group.read_string_array_attribute("weight_names");
    if (names.empty()) continue;
    file_layers.push_back(&layer_group);
    file_weight_names.push_back(std::move(names));
  }
  std::vector<const models::Model::Member*> members;
  for (const auto& member : model.members()) {
    if (!member_weights(model, member).empty()) members.push_back(&member);
  }
  if (members.size() != file_layers.size()) {
    throw Error(ErrorCode::data_loss, group.path() + " holds weights for " + std::to_string(file_layers.size()) +
                                          " layers; the model has " + std::to_string(members.size()) +
                                          " layers with weights");
  }
  for (size_t l = 0; l < members.size(); ++l) {
    std::vector<std::pair<std::string, Variable*>> weights = member_weights(model, *members[l]);
    const std::vector<std::string>& names = file_weight_names[l];
    if (names.size() != weights.size()) {
      throw Error(ErrorCode::data_loss, file_layers[l]->path() + " lists " + std::to_string(names.size()) +
                                            " weights; layer '" + members[l]->name() + "' has " +
                                            std::to_string(weights.size()));
    }
    for (size_t i = 0; i < weights.size(); ++i) {
      read_weight(*file_layers[l], names[i], *weights[i].second);
    }
  }
}

void read_optimizer(models::Model& model, const StoredGroup& file) {
  optimizers::Optimizer& optimizer = *model.optimizer();
  const StoredGroup& group = file.open_group("optimizer_weights");
  std::vector<std::string> names = group.read_string_array_attribute("weight_names");
  const std::vector<optimizers::KerasVariable> variables = optimizer.keras_variables();
  const size_t scalars = optimizer_scalars(optimizer), expected = scalars + variables.size();
  // A model compiled but never trained: Keras has not built the slots yet; they start at zero.
  bool untrained = names.size() == scalars && group.read_int64_scalar(names[0]) == 0;
  if (names.size() != expected && !untrained) {
    throw Error(ErrorCode::data_loss, group.path() + " holds " + std::to_string(names.size()) +
                                          " optimizer values; " + optimizer.class_name() + " of this model needs " +
                                          std::to_string(expected));
  }
  optimizer.set_iterations(group.read_int64_scalar(names[0]));
  if (scalars == 2) optimizer.set_learning_rate(group.read_dataset(names[1], Shape{}).data<float>()[0]);
  if (untrained) return;
  const std::vector<Variable*> weights = model.trainable_weights();
  for (size_t v = 0; v < variables.size(); ++v) read_keras_value(group, names[scalars + v], variables[v], weights);
}

/// A loss from Keras' config: a name or a {"class_name", "config"} object.
std::shared_ptr<losses::Loss> loss_from(const json& loss) {
  check_argument(loss.is_string() || loss.is_object(), "a loss in the compile config is malformed: " +
                                                           loss.dump().substr(0, 200));
  return loss.is_string() ? losses::get(loss.get<std::string>()) : losses::from_config(loss);
}

/// Metrics as compile takes them: names, or serialized Keras metrics (checked when the model
/// first trains or evaluates, against its outputs).
std::vector<json> metrics_from(const json& metrics) {
  if (metrics.is_null()) return {};
  check_argument(metrics.is_array(), "metrics must be a list, got " + metrics.dump().substr(0, 200));
  std::vector<json> result;
  for (const json& metric : metrics) {
    metrics::name_of(metric);  // a name or an object with a class_name
    result.push_back(metric);
  }
  return result;
}

/// Compiles `model` as its file's compile config says. Returns false when the config names no
/// optimizer: Keras 3 writes none for a string optimizer (compile(optimizer="adam")); as Keras'
/// load_model does, the model then gets Keras' default, RMSprop, with a warning, and the file's
/// optimizer variables are not read. Losses, loss_weights and metrics may be dicts keyed by
/// output name.
bool compile_from(models::Model& model, const json& config, const std::string& path) {
  const json& loss = config.at("loss");
  const bool per_output = loss.is_object() && !loss.contains("class_name");
  std::map<std::string, std::shared_ptr<losses::Loss>> output_losses;
  std::map<std::string, double> loss_weights;
  std::map<std::string, std::vector<json>> output_metrics;
  if (per_output) {
    for (const auto& [output, value] : loss.items()) output_losses[output] = loss_from(value);
    const json& weights = config.value("loss_weights", json());
    check_argument(weights.is_null() || weights.is_object(),
                   "loss_weights must be a dict keyed by output name, got " + weights.dump());
    if (weights.is_object()) {
      for (const auto& [output, value] : weights.items()) loss_weights[output] = value.get<double>();
    }
    const json& metrics = config.value("metrics", json());
    check_argument(metrics.is_null() || metrics.is_object(),
                   "with several outputs, metrics must be a dict keyed by output name, got " + metrics.dump());
    if (metrics.is_object()) {
      for (const auto& [output, value] : metrics.items()) output_metrics[output] = metrics_from(value);
    }
  } else {
    check_argument(config.value("loss_weights", json()).is_null(),
                   "loss_weights for a single loss are not supported: scale the loss instead");
  }
  auto compile = [&](std::shared_ptr<optimizers::Optimizer> optimizer) {
    if (per_output) {
      model.compile(std::move(optimizer), output_losses, loss_weights, output_metrics);
    } else {
      model.compile(std::move(optimizer), loss_from(loss), metrics_from(config.value("metrics", json::array())));
    }
  };
  const char* key = config.contains("optimizer_config") ? "optimizer_config" : "optimizer";
  if (!config.contains(key) || config.at(key).is_null()) {
    std::fprintf(stderr,
                 "WARNING: %s names no optimizer (Keras 3 saves none for a string optimizer such "
                 "as \"adam\"): compiled with Keras' default, RMSprop(learning_rate=0.001), without "
                 "the file's optimizer variables; compile the model again to train with another\n",
                 path.c_str());
    compile(optimizers::get("rmsprop"));
    return false;
  }
  const json& optimizer = config.at(key);
  compile(optimizer.is_string() ? optimizers::get(optimizer.get<std::string>())
                                : optimizers::from_config(optimizer));
  return true;
}

/// Keras' naming.to_snake_case: "MaxPooling2D" -> "max_pooling2d".
std::string to_snake_case(const std::string& class_name) {
  std::string name = std::regex_replace(class_name, std::regex("(.)([A-Z][a-z]+)"), "$1_$2");
  name = std::regex_replace(name, std::regex("([a-z])([A-Z])"), "$1_$2");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return name;
}

/// The keys Keras 3 files its layers under: the class in snake case, numbered from the
/// second of a class ("dense", "dense_1"), whatever the layers are named.
std::vector<std::string> keras3_layer_keys(const models::Model& model) {
  std::map<std::string, int> used;
  std::vector<std::string> keys;
  for (const auto& member : model.members()) {
    std::string key = to_snake_case(member.class_name());
    auto [entry, first] = used.try_emplace(key, 0);
    if (!first) {
      key += '_';
      key += std::to_string(++entry->second);
    }
    keys.push_back(key);
  }
  return keys;
}

/// Keras 3's weights layout (model.weights.h5 in a .keras archive, and .weights.h5 files):
///   /layers/<key>/vars/0, 1, ...     (key: keras3_layer_keys; @name = the layer's name)
///   /optimizer/vars/0 iteration, 1 learning_rate (none with a schedule), then the slots in
///                                    Keras' order (Optimizer::keras_variables)
///   /vars                            (@name = the model's name; the model's own weights: none)
/// /layers/<key>/vars of each member of `model` under `group`; a nested model's under
/// /layers/<key>/layers/..., as Keras 3 nests them.
void write_keras3_layers(const models::Model& model, const Hdf5Object& group) {
  Hdf5Object layers = group.create_group("layers");
  std::vector<std::string> keys = keras3_layer_keys(model);
  for (size_t l = 0; l < keys.size(); ++l) {
    const models::Model::Member& member = model.members()[l];
    Hdf5Object member_group = layers.create_group(keys[l]);
    if (member.model) write_keras3_layers(*member.model, member_group);
    Hdf5Object vars = member_group.create_group("vars");
    vars.write_string_attribute("name", member.name());
    if (member.model) continue;
    int index = 0;
    for (const Variable* weight : std::as_const(*member.layer).weights()) {
      write_weight(vars, std::to_string(index++), *weight, weight->dtype());
    }
  }
}

void read_keras3_layers(const models::Model& model, const StoredGroup& group) {
  const StoredGroup& layers = group.open_group("layers");
  std::vector<std::string> keys = keras3_layer_keys(model);
  for (size_t l = 0; l < keys.size(); ++l) {
    const models::Model::Member& member = model.members()[l];
    if (member.model) {
      read_keras3_layers(*member.model, layers.open_group(keys[l]));
      continue;
    }
    std::vector<Variable*> weights = member.layer->weights();
    if (weights.empty()) continue;
    const StoredGroup& vars = layers.open_group(keys[l] + "/vars");
    for (size_t i = 0; i < weights.size(); ++i) {
      read_weight(vars, std::to_string(i), *weights[i]);
    }
    if (vars.has_child(std::to_string(weights.size()))) {
      throw Error(ErrorCode::data_loss, vars.path() + " holds more weights than layer '" + member.name() + "' has");
    }
  }
}

void write_keras3_weights(const models::Model& model, const Hdf5Object& file, bool with_optimizer) {
  write_keras3_layers(model, file);
  if (with_optimizer && model.optimizer()) {
    optimizers::Optimizer& optimizer = *model.optimizer();
    Hdf5Object vars = file.create_group("optimizer").create_group("vars");
    vars.write_string_attribute("name", keras_optimizer_name(optimizer.class_name()));
    vars.write_int64_scalar("0", optimizer.iterations());
    if (!optimizer.learning_rate_schedule()) {
      float learning_rate = optimizer.learning_rate();
      vars.write_dataset("1", Shape{}, &learning_rate);
    }
    size_t index = optimizer_scalars(optimizer);
    const std::vector<Variable*> weights = model.trainable_weights();
    for (const optimizers::KerasVariable& variable : optimizer.keras_variables()) {
      Tensor value = keras_value(variable, weights);
      vars.write_dataset(std::to_string(index++), value.shape(), value.data<float>(), stored_dtype(variable, weights));
    }
  }
  file.create_group("vars").write_string_attribute("name", model.name());
}

/// Layers are matched by their keys, as Keras 3 does.
void read_keras3_weights(models::Model& model, const StoredGroup& file, bool with_optimizer) {
  read_keras3_layers(model, file);
  if (!with_optimizer || !model.optimizer() || !file.has_child("optimizer")) return;
  optimizers::Optimizer& optimizer = *model.optimizer();
  const StoredGroup& vars = file.open_group("optimizer/vars");
  optimizer.set_iterations(vars.read_int64_scalar("0"));
  const size_t scalars = optimizer_scalars(optimizer);
  if (scalars == 2) optimizer.set_learning_rate(vars.read_dataset("1", Shape{}).data<float>()[0]);
  // A model compiled but never trained: Keras has not built the slots yet; they start at zero.
  if (!vars.has_child(std::to_string(scalars)) && optimizer.iterations() == 0) return;
  const std::vector<Variable*> weights = model.trainable_weights();
  const std::vector<optimizers::KerasVariable> variables = optimizer.keras_variables();
  for (size_t v = 0; v < variables.size(); ++v) read_keras_value(vars, std::to_string(scalars + v), variables[v], weights);
}

/// A scratch file for an HDF5 image going into or coming out of a .keras archive.
struct ScratchFile {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("tenfold-" + std::to_string(getpid()) + "-" +
                       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ".h5"))
                         .string();
  ~ScratchFile() { std::filesystem::remove(path); }
  std::string read() const {
    std::ifstream file(path, std::ios::binary);
    std::stringstream bytes;
    bytes << file.rdbuf();
    return bytes.str();
  }
};

/// Adds where Keras 3 finds each class (its .keras loader needs them; its .h5 loader does
/// without), as Keras writes them: a model's, then its layers', nested models included.
void add_keras_modules(json& config) {
  const bool sequential = config.at("class_name") == "Sequential";
  config["module"] = sequential ? "keras" : "keras.src.models.functional";
  config["registered_name"] = sequential ? json(nullptr) : json("Functional");
  for (json& layer : config.at("config").at("layers")) {
    const std::string class_name = layer.at("class_name");
    if (class_name == "Sequential" || class_name == "Functional") {
      add_keras_modules(layer);
    } else if (!layer.contains("module")) {  // keras.layers' own (others name theirs)
      layer["module"] = "keras.layers";
      layer["registered_name"] = nullptr;
    }
  }
}

void save_keras_archive(const models::Model& model, const std::string& path) {
  json config = model.to_config();
  add_keras_modules(config);
  const bool sequential = model.class_name() == "Sequential";
  json input_shape = json::array({nullptr});
  for (int64_t dim : model.input_shape().dims()) input_shape.push_back(dim);
  config["build_config"] = {{"input_shape", sequential ? input_shape : json(nullptr)}};
  if (model.optimizer()) {
    json compile = training_config(model, true);
    compile["optimizer"] = compile.at("optimizer_config");
    compile["optimizer"]["module"] = "keras.optimizers";
    compile["optimizer"]["registered_name"] = nullptr;
    compile.erase("optimizer_config");
    config["compile_config"] = compile;
  }
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d@%H:%M:%S", std::localtime(&now));
  json metadata = {{"keras_version", keras_version}, {"date_saved", date}};
  ScratchFile weights;
  Hdf5Object file = create_hdf5_file(weights.path);
  write_keras3_weights(model, file, true);
  file.close();
  std::string weight_bytes = weights.read();
  replace_file_atomically(path, [&](const std::string& temporary) {
    write_zip(temporary, {{"metadata.json", metadata.dump()},
                          {"config.json", config.dump()},
                          {"model.weights.h5", weight_bytes}});
  });
}

std::unique_ptr<models::Model> load_keras_archive(const std::string& path) {
  ZipReader archive(path, "a Keras .keras file");
  json config = parse_config(archive.read("config.json", uint64_t(1) << 26), path + ":config.json");
  std::unique_ptr<models::Model> model;
  bool with_optimizer = true;
  try {
    model = models::from_config(config);
    // A model saved before compile() has an empty compile config: it loads uncompiled.
    if (config.contains("compile_config") && !config.at("compile_config").empty()) {
      with_optimizer = compile_from(*model, config.at("compile_config"), path);
    }
  } catch (const Error& error) {
    throw Error(error.code(), path + ": " + error.message());
  } catch (const json::exception& error) {
    throw Error(ErrorCode::data_loss, path + ": the model config is malformed: " + error.what());
  }
  ScratchFile weights;
  {
    std::ofstream out(weights.path, std::ios::binary);
    out << archive.read("model.weights.h5", max_archive_entry_bytes);
  }
  try {
    read_keras3_weights(*model, read_stored_file(weights.path), with_optimizer);
  } catch (const Error& error) {
    // Name the user's file, not the scratch copy the archive's weights were read from.
    std::string message = error.message();
    for (size_t at; (at = message.find(weights.path)) != std::string::npos;) {
      message.replace(at, weights.path.size(), path + ":model.weights.h5");
    }
    throw Error(error.code(), message);
  }
  return model;
}

}  // namespace

std::unique_ptr<models::Model> load_model_json(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw Error(ErrorCode::not_found, "model JSON " + path + " does not exist");
  check_argument(std::filesystem::file_size(path) <= (uint64_t(1) << 26), path + " is too large for a model JSON");
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  json config = parse_config(text.str(), path);
  try {
    std::unique_ptr<models::Model> model = models::from_config(config);
    // Keras 3 writes a compiled model's compile config into its JSON; model_from_json
    // compiles with it.
    if (config.contains("compile_config") && config.at("compile_config").is_object() &&
        !config.at("compile_config").empty()) {
      compile_from(*model, config.at("compile_config"), path);
    }
    return model;
  } catch (const Error& error) {
    throw Error(error.code(), path + ": " + error.message());
  } catch (const json::exception& error) {
    throw Error(ErrorCode::data_loss, path + ": the model config is malformed: " + error.what());
  }
}

void save_weights(const models::Model& model, const std::string& path) {
  check_argument(format_of(path) == Format::weights, "save_weights writes .weights.h5 files, got '" + path + "'");
  replace_file_atomically(path, [&](const std::string& temporary) {
    Hdf5Object file = create_hdf5_file(temporary);
    write_keras3_weights(model, file, false);
    file.close();
  });
}

void load_weights(models::Model& model, const std::string& path) {
  check_argument(format_of(path) == Format::weights, "load_weights reads .weights.h5 files, got '" + path + "'");
  read_keras3_weights(model, read_stored_file(path), false);
}

void save_model(const models::Model& model, const std::string& path,
                const json& training_state) {
  check_argument(model.built(), "model '" + model.name() + "' is not built: nothing to save");
  Format format = format_of(path);
  check_argument(format != Format::weights, "'" + path + "' is a weights file: use save_weights, or a .keras or .h5 path");
  if (format == Format::keras) {
    check_argument(training_state.is_null(), "backups are .h5 files");
    save_keras_archive(model, path);
    return;
  }
  replace_file_atomically(path, [&](const std::string& temporary) {
    Hdf5Object file = create_hdf5_file(temporary);
    file.write_string_attribute("keras_version", keras_version);
    file.write_string_attribute("backend", "tensorflow");
    file.write_string_attribute("model_config", model.to_config().dump());
    if (model.optimizer()) file.write_string_attribute("training_config", training_config(model).dump());
    if (!training_state.is_null()) file.write_string_attribute("tenfold_training_state", training_state.dump());
    write_weights(model, file);
    if (model.optimizer()) write_optimizer(model, file);
    file.close();
  });
}

json restore_model(models::Model& model, const std::string& path) {
  check_h5(path);
  check_argument(model.optimizer() != nullptr, "restoring " + path + " needs a compiled model");
  StoredGroup file = read_stored_file(path);
  json state = file.has_attribute("tenfold_training_state")
                   ? parse_config(file.read_string_attribute("tenfold_training_state"), path + "@tenfold_training_state")
                   : json(nullptr);
  // A file that fails half-way must not leave half its values in the model.
  optimizers::Optimizer& optimizer = *model.optimizer();
  std::vector<Variable*> weights = model.weights();
  std::vector<Tensor*> values;
  for (Variable* weight : weights) values.push_back(&weight->value());
  for (const optimizers::KerasVariable& variable : optimizer.keras_variables()) values.push_back(variable.value);
  std::vector<Tensor> saved;
  for (const Tensor* value : values) saved.push_back(value->clone());
  int64_t iterations = optimizer.iterations();
  float learning_rate = optimizer.learning_rate();
  try {
    read_weights(model, file);
    read_optimizer(model, file);
  } catch (...) {
    auto copy = [](const Tensor& from, Tensor& to) { std::memcpy(to.raw_data(), from.raw_data(), from.num_bytes()); };
    for (size_t i = 0; i < values.size(); ++i) copy(saved[i], *values[i]);
    optimizer.set_iterations(iterations);
    if (!optimizer.learning_rate_schedule()) optimizer.set_learning_rate(learning_rate);
    throw;
  }
  return state;
}

std::unique_ptr<models::Model> load_model(const std::string& path) {
  Format format = format_of(path);
  check_argument(format != Format::weights, "'" + path + "' holds weights only: build the model, then load_weights");
  if (format == Format::keras) return load_keras_archive(path);
  StoredGroup file = read_stored_file(path);
  json config = parse_config(file.read_string_attribute("model_config"), path + "@model_config");
  std::unique_ptr<models::Model> model;
  try {
    model = models::from_config(config);
  } catch (const Error& error) {
    throw Error(error.code(), path + ": " + error.message());
  } catch (const json::exception& error) {
    throw Error(ErrorCode::data_loss, path + ": the model config is malformed: " + error.what());
  }
  read_weights(*model, file);
  if (file.has_attribute("training_config")) {
    json training = parse_config(file.read_string_attribute("training_config"), path + "@training_config");
    bool with_optimizer = false;
    try {
      with_optimizer = compile_from(*model, training, path);
    } catch (const json::exception& error) {
      throw Error(ErrorCode::data_loss, path + ": the training config is malformed: " + error.what());
    }
    if (with_optimizer && file.has_child("optimizer_weights")) read_optimizer(*model, file);
  }
  return model;
}

}  // namespace tenfold::io
