#include "layers/strict_config.h"

#include "core/error.h"
#include "layers/initializers.h"

namespace tenfold::layers {

namespace {

using nlohmann::json;

/// The policy name of a Keras 3 DTypePolicy object or a Keras 2 string.
std::string dtype_policy_name(const json& dtype) {
  if (dtype.is_string()) return dtype.get<std::string>();
  if (dtype.is_object() && dtype.contains("config") && dtype.at("config").contains("name") &&
      dtype.at("config").at("name").is_string()) {
    return dtype.at("config").at("name").get<std::string>();
  }
  return dtype.dump();
}

}  // namespace

StrictConfig::StrictConfig(const std::string& class_name, const json& config)
    : class_name_(class_name), config_(config) {
  check_argument(config.is_object(), class_name + " config must be an object, got " +
                                         config.dump().substr(0, 200));
  name_ = take<std::string>("name", "");
  trainable_ = take("trainable", true);
  const json* dtype = find("dtype");
  if (dtype != nullptr && !dtype->is_null()) {
    std::string policy = dtype_policy_name(*dtype);
    if (policy == "mixed_float16") {
      refuse("dtype", *dtype, "is not supported on CPUs (no float16 units); train in float32");
    }
    if (policy != "float32") refuse("dtype", *dtype, "is not supported; Tenfold computes in float32");
  }
  // Keras 2 writes the model's input shape on its first layer; the model builder reads it.
  ignore("batch_input_shape");
}

const json* StrictConfig::find(const std::string& key) {
  seen_.insert(key);
  auto found = config_.find(key);
  return found == config_.end() ? nullptr : &*found;
}

void StrictConfig::refuse(const std::string& key, const json& value, const std::string& why) const {
  std::string layer = class_name_ + (name_.empty() ? "" : " '" + name_ + "'");
  throw Error(ErrorCode::invalid_argument,
              layer + ": " + key + (value.is_null() ? "" : " " + value.dump()) + " " + why);
}

int64_t StrictConfig::take_axis(const std::string& key, int64_t fallback) {
  const json* value = find(key);
  if (value == nullptr || value->is_null()) return fallback;
  const json& axis = value->is_array() && value->size() == 1 ? value->at(0) : *value;
  if (!axis.is_number_integer()) refuse(key, *value, "is not supported: Tenfold takes one axis");
  return axis.get<int64_t>();
}

std::array<int64_t, 2> StrictConfig::take_pair(const std::string& key,
                                               std::array<int64_t, 2> fallback) {
  const json* value = find(key);
  if (value == nullptr || value->is_null()) return fallback;
  if (value->is_number_integer()) return {value->get<int64_t>(), value->get<int64_t>()};
  if (!value->is_array() || value->size() != 2 || !(*value)[0].is_number_integer() ||
      !(*value)[1].is_number_integer()) {
    refuse(key, *value, "must be an integer or a pair of integers");
  }
  return {(*value)[0].get<int64_t>(), (*value)[1].get<int64_t>()};
}

std::string StrictConfig::take_activation() {
  const json* value = find("activation");
  if (value == nullptr || value->is_null()) return "linear";
  if (!value->is_string()) refuse("activation", *value, "must be a named activation");
  return value->get<std::string>();
}

Initializer StrictConfig::take_initializer(const std::string& key, const std::string& fallback) {
  const json* value = find(key);
  if (value == nullptr || value->is_null()) return Initializer(fallback);
  try {
    return value->is_string() ? Initializer(value->get<std::string>()) : Initializer::from_config(*value);
  } catch (const Error& error) {
    refuse(key, nullptr, error.message());
  }
}

void StrictConfig::allow_only(const std::string& key, const std::vector<json>& values,
                              const std::string& implemented) {
  const json* value = find(key);
  if (value == nullptr || value->is_null()) return;
  for (const json& accepted : values) {
    if (*value == accepted) return;
  }
  refuse(key, *value, "is not supported: " + implemented);
}

void StrictConfig::allow_null(const std::string& key) {
  const json* value = find(key);
  if (value != nullptr && !value->is_null()) {
    refuse(key, *value, "is not supported yet; remove it from the layer");
  }
}

void StrictConfig::ignore(const std::string& key) { seen_.insert(key); }

void StrictConfig::finish() const {
  for (const auto& [key, value] : config_.items()) {
    if (!seen_.contains(key)) refuse(key, value, "is not a setting Tenfold knows for this layer");
  }
}

}  // namespace tenfold::layers
