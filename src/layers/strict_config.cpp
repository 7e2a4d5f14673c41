#include "layers/strict_config.h"

#include "core/error.h"
#include "layers/initializers.h"

namespace tenfold::layers {

using nlohmann::json;

StrictConfig::StrictConfig(const std::string& class_name, const json& config) : ConfigReader(class_name, config) {
  name_ = take<std::string>("name", "");
  if (!name_.empty()) set_owner(class_name + " '" + name_ + "'");
  trainable_ = take("trainable", true);
  const json* dtype = find("dtype");
  if (dtype != nullptr) {
    try {
      dtype_policy_ = dtype_policy_from_config(*dtype);
    } catch (const Error& error) {
      refuse("dtype", *dtype, "is refused: " + error.message());
    }
  }
  // Keras 2 writes the model's input shape on its first layer; the model builder reads it.
  ignore("batch_input_shape");
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

}  // namespace tenfold::layers
