#include "io/model_file.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/hdf5.h"
#include "losses/loss.h"
#include "optimizers/optimizer.h"

namespace tenfold::io {

namespace {

using nlohmann::json;

// The Keras release whose file layout this follows (checked against its files in tests).
constexpr const char* keras_version = "3.15.1";
// Deeper JSON than any real model config: a file nesting more is refused, not recursed into.
constexpr int max_config_depth = 64;

std::string extension_of(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return extension;
}

void check_h5(const std::string& path) {
  std::string extension = extension_of(path);
  check_argument(extension == ".h5" || extension == ".hdf5",
                 "cannot tell the format of '" + path + "' from its extension: use .h5 (Keras' "
                 "HDF5 model file)");
}

/// Keras' default optimizer names, which name the optimizer's group in the file.
std::string keras_optimizer_name(const std::string& class_name) {
  if (class_name == "Adam") return "adam";
  if (class_name == "RMSprop") return "rmsprop";
  return class_name;  // SGD
}

json training_config(const models::Sequential& model) {
  json loss = model.loss()->get_config();
  loss["from_logits"] = false;
  json optimizer = model.optimizer()->get_config();
  optimizer["name"] = keras_optimizer_name(model.optimizer()->class_name());
  return {{"loss", {{"class_name", model.loss()->class_name()}, {"config", loss}}},
          {"loss_weights", nullptr},
          {"metrics", model.metric_names()},
          {"weighted_metrics", nullptr},
          {"run_eagerly", false},
          {"steps_per_execution", 1},
          {"jit_compile", false},
          {"optimizer_config", {{"class_name", model.optimizer()->class_name()}, {"config", optimizer}}}};
}

void write_weights(const models::Sequential& model, const Hdf5Object& file) {
  Hdf5Object group = file.create_group("model_weights");
  group.write_string_attribute("backend", "tensorflow");
  group.write_string_attribute("keras_version", keras_version);
  std::vector<std::string> layer_names;
  for (Layer* layer : model.layers()) layer_names.push_back(layer->name());
  group.write_string_array_attribute("layer_names", layer_names);
  for (Layer* layer : model.layers()) {
    Hdf5Object layer_group = group.create_group(layer->name());
    std::vector<std::string> names;
    std::vector<const Variable*> weights = std::as_const(*layer).weights();
    if (!weights.empty()) {
      Hdf5Object inner = layer_group.create_group(model.name()).create_group(layer->name());
      for (const Variable* weight : weights) {
        names.push_back(model.name() + "/" + layer->name() + "/" + weight->name());
        Tensor value = weight->read();
        inner.write_dataset(weight->name(), value.shape(), value.data<float>());
      }
    }
    layer_group.write_string_array_attribute("weight_names", names);
  }
  group.create_group("top_level_model_weights").write_string_array_attribute("weight_names", {});
}

void write_optimizer(const models::Sequential& model, const Hdf5Object& file) {
  optimizers::Optimizer& optimizer = *model.optimizer();
  std::string prefix = keras_optimizer_name(optimizer.class_name());
  Hdf5Object group = file.create_group("optimizer_weights");
  Hdf5Object slots = group.create_group(prefix);
  std::vector<std::string> names = {prefix + "/iteration", prefix + "/learning_rate"};
  slots.write_int64_scalar("iteration", optimizer.iterations());
  float learning_rate = optimizer.learning_rate();
  slots.write_dataset("learning_rate", Shape{}, &learning_rate);
  std::vector<std::string> slot_names = optimizer.slot_names();
  size_t index = 0;
  for (Layer* layer : model.layers()) {
    for (Variable* weight : layer->weights()) {
      for (size_t k = 0; k < slot_names.size(); ++k) {
        std::string name = model.name() + "_" + layer->name() + "_" + weight->name() + "_" + slot_names[k];
        Tensor value = weight->to_keras_layout(optimizer.slot(index, int(k)));
        slots.write_dataset(name, value.shape(), value.data<float>());
        names.push_back(prefix + "/" + name);
      }
      ++index;
    }
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

void read_weights(models::Sequential& model, const Hdf5Object& file) {
  Hdf5Object group = file.open_group("model_weights");
  std::vector<std::string> layer_names = group.read_string_array_attribute("layer_names");
  for (Layer* layer : model.layers()) {
    std::vector<Variable*> weights = layer->weights();
    if (weights.empty()) continue;
    if (std::find(layer_names.begin(), layer_names.end(), layer->name()) == layer_names.end()) {
      throw Error(ErrorCode::data_loss, group.path() + " has no weights for layer '" + layer->name() + "'");
    }
    Hdf5Object layer_group = group.open_group(layer->name());
    std::vector<std::string> names = layer_group.read_string_array_attribute("weight_names");
    if (names.size() != weights.size()) {
      throw Error(ErrorCode::data_loss, layer_group.path() + " lists " + std::to_string(names.size()) +
                                            " weights; layer '" + layer->name() + "' has " +
                                            std::to_string(weights.size()));
    }
    for (size_t i = 0; i < weights.size(); ++i) {
      weights[i]->assign(layer_group.read_dataset(names[i], weights[i]->shape()));
    }
  }
}

void read_optimizer(models::Sequential& model, const Hdf5Object& file) {
  optimizers::Optimizer& optimizer = *model.optimizer();
  Hdf5Object group = file.open_group("optimizer_weights");
  std::vector<std::string> names = group.read_string_array_attribute("weight_names");
  std::vector<std::string> slot_names = optimizer.slot_names();
  std::vector<Variable*> weights = model.weights();
  size_t expected = 2 + weights.size() * slot_names.size();
  if (names.size() != expected) {
    throw Error(ErrorCode::data_loss, group.path() + " holds " + std::to_string(names.size()) +
                                          " optimizer values; " + optimizer.class_name() + " of this model needs " +
                                          std::to_string(expected));
  }
  optimizer.set_iterations(group.read_int64_scalar(names[0]));
  optimizer.set_learning_rate(group.read_dataset(names[1], Shape{}).data<float>()[0]);
  for (size_t i = 0; i < weights.size(); ++i) {
    for (size_t k = 0; k < slot_names.size(); ++k) {
      Tensor value = group.read_dataset(names[2 + i * slot_names.size() + k], weights[i]->shape());
      weights[i]->from_keras_layout(value, optimizer.slot(i, int(k)));
    }
  }
}

void compile_from(models::Sequential& model, const json& config) {
  const json& loss = config.at("loss");
  std::string loss_name = loss.is_string() ? loss.get<std::string>() : loss.at("class_name").get<std::string>();
  check_argument(loss.is_string() || !loss.at("config").value("from_logits", false),
                 "losses with from_logits=True are not supported by Tenfold yet");
  std::vector<std::string> metrics;
  for (const json& metric : config.value("metrics", json::array())) {
    check_argument(metric.is_string(), "only named metrics are supported, got " + metric.dump());
    metrics.push_back(metric.get<std::string>());
  }
  model.compile(optimizers::from_config(config.at("optimizer_config")), losses::get(loss_name), metrics);
}

}  // namespace

void save_model(const models::Sequential& model, const std::string& path) {
  check_h5(path);
  check_argument(model.built(), "model '" + model.name() + "' is not built: nothing to save");
  replace_file_atomically(path, [&](const std::string& temporary) {
    Hdf5Object file = create_hdf5_file(temporary);
    file.write_string_attribute("keras_version", keras_version);
    file.write_string_attribute("backend", "tensorflow");
    file.write_string_attribute("model_config", model.to_config().dump());
    if (model.optimizer()) file.write_string_attribute("training_config", training_config(model).dump());
    write_weights(model, file);
    if (model.optimizer()) write_optimizer(model, file);
  });
}

std::unique_ptr<models::Sequential> load_model(const std::string& path) {
  check_h5(path);
  Hdf5Object file = open_hdf5_file(path);
  json config = parse_config(file.read_string_attribute("model_config"), path + "@model_config");
  std::unique_ptr<models::Sequential> model;
  try {
    model = models::Sequential::from_config(config);
  } catch (const Error& error) {
    throw Error(error.code(), path + ": " + error.what());
  } catch (const json::exception& error) {
    throw Error(ErrorCode::data_loss, path + ": the model config is malformed: " + error.what());
  }
  read_weights(*model, file);
  if (file.has_attribute("training_config")) {
    json training = parse_config(file.read_string_attribute("training_config"), path + "@training_config");
    try {
      compile_from(*model, training);
    } catch (const json::exception& error) {
      throw Error(ErrorCode::data_loss, path + ": the training config is malformed: " + error.what());
    }
    if (file.has_child("optimizer_weights")) read_optimizer(*model, file);
  }
  return model;
}

}  // namespace tenfold::io
