#include "layers/registry.h"

#include "core/error.h"
#include "layers/activation.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/dropout.h"
#include "layers/flatten.h"
#include "layers/input.h"
#include "layers/pooling.h"

namespace tenfold::layers {

namespace {

using nlohmann::json;

template <typename T>
T value_or(const json& config, const char* key, T fallback) {
  auto found = config.find(key);
  return found == config.end() || found->is_null() ? fallback : found->get<T>();
}

std::array<int64_t, 2> pair_of(const json& config, const char* key, std::array<int64_t, 2> fallback) {
  auto found = config.find(key);
  if (found == config.end() || found->is_null()) return fallback;
  if (found->is_number_integer()) return {found->get<int64_t>(), found->get<int64_t>()};
  check_argument(found->is_array() && found->size() == 2,
                 std::string("'") + key + "' must be an integer or a pair, got " + found->dump());
  return {(*found)[0].get<int64_t>(), (*found)[1].get<int64_t>()};
}

std::string activation_of(const json& config) {
  auto found = config.find("activation");
  if (found == config.end() || found->is_null()) return "linear";
  check_argument(found->is_string(), "only named activations are supported, got " + found->dump());
  return found->get<std::string>();
}

std::string initializer_of(const json& config, const char* key, const std::string& fallback) {
  auto found = config.find(key);
  if (found == config.end() || found->is_null()) return fallback;
  if (found->is_string()) return found->get<std::string>();
  return found->at("class_name").get<std::string>();
}

void check_channels_last(const json& config) {
  std::string format = value_or<std::string>(config, "data_format", "channels_last");
  check_argument(format == "channels_last",
                 "data_format '" + format + "' is not supported; Tenfold is channels_last (NHWC)");
}

}  // namespace

std::shared_ptr<Layer> from_config(const json& layer) {
  check_argument(layer.is_object() && layer.contains("class_name") && layer.contains("config"),
                 "a layer config needs 'class_name' and 'config', got " + layer.dump().substr(0, 200));
  const std::string class_name = layer.at("class_name").get<std::string>();
  const json& config = layer.at("config");
  std::string name = value_or<std::string>(config, "name", "");
  if (class_name == "Conv2D") {
    check_channels_last(config);
    return std::make_shared<Conv2D>(Conv2DOptions{
        .filters = config.at("filters").get<int64_t>(),
        .kernel_size = pair_of(config, "kernel_size", {3, 3}),
        .strides = pair_of(config, "strides", {1, 1}),
        .padding = value_or<std::string>(config, "padding", "valid"),
        .activation = activation_of(config),
        .use_bias = value_or(config, "use_bias", true),
        .kernel_initializer = initializer_of(config, "kernel_initializer", "glorot_uniform"),
        .bias_initializer = initializer_of(config, "bias_initializer", "zeros"),
        .name = name});
  }
  if (class_name == "Dense") {
    return std::make_shared<Dense>(DenseOptions{
        .units = config.at("units").get<int64_t>(),
        .activation = activation_of(config),
        .use_bias = value_or(config, "use_bias", true),
        .kernel_initializer = initializer_of(config, "kernel_initializer", "glorot_uniform"),
        .bias_initializer = initializer_of(config, "bias_initializer", "zeros"),
        .name = name});
  }
  if (class_name == "MaxPooling2D" || class_name == "AveragePooling2D") {
    check_channels_last(config);
    Pooling2DOptions options{.pool_size = pair_of(config, "pool_size", {2, 2}),
                             .padding = value_or<std::string>(config, "padding", "valid"),
                             .name = name};
    if (config.contains("strides") && !config.at("strides").is_null()) {
      options.strides = pair_of(config, "strides", options.pool_size);
    }
    if (class_name == "MaxPooling2D") return std::make_shared<MaxPooling2D>(options);
    return std::make_shared<AveragePooling2D>(options);
  }
  if (class_name == "Flatten") return std::make_shared<Flatten>(name);
  if (class_name == "Activation") return std::make_shared<Activation>(activation_of(config), name);
  if (class_name == "ReLU") return std::make_shared<ReLU>(name);
  if (class_name == "Softmax") return std::make_shared<Softmax>(name);
  if (class_name == "Dropout") {
    auto seed = config.contains("seed") && !config.at("seed").is_null()
                    ? std::optional<uint64_t>(config.at("seed").get<uint64_t>())
                    : std::nullopt;
    return std::make_shared<Dropout>(config.at("rate").get<float>(), seed, name);
  }
  if (class_name == "InputLayer") {
    const json& shape = config.contains("batch_shape") ? config.at("batch_shape")
                                                       : config.at("batch_input_shape");
    std::vector<int64_t> dims;
    for (size_t i = 1; i < shape.size(); ++i) dims.push_back(shape[i].get<int64_t>());
    return std::make_shared<InputLayer>(Shape(dims), name);
  }
  throw Error(ErrorCode::invalid_argument,
              "layer class '" + class_name +
                  "' is not supported (Tenfold never runs code from a model file); supported: "
                  "InputLayer, Conv2D, MaxPooling2D, AveragePooling2D, Flatten, Dense, "
                  "Activation, ReLU, Softmax, Dropout");
}

}  // namespace tenfold::layers
