#include "core/config_reader.h"

#include "core/error.h"

namespace tenfold {

using nlohmann::json;

ConfigReader::ConfigReader(std::string owner, const json& config) : owner_(std::move(owner)), config_(config) {
  check_argument(config.is_object(), owner_ + " config must be an object, got " + config.dump().substr(0, 200));
}

const json* ConfigReader::find(const std::string& key) {
  seen_.insert(key);
  auto found = config_.find(key);
  return found == config_.end() ? nullptr : &*found;
}

void ConfigReader::refuse(const std::string& key, const json& value, const std::string& why) const {
  throw Error(ErrorCode::invalid_argument, owner_ + ": " + key + (value.is_null() ? "" : " " + value.dump()) + " " + why);
}

void ConfigReader::allow_only(const std::string& key, const std::vector<json>& values,
                              const std::string& implemented) {
  const json* value = find(key);
  if (value == nullptr || value->is_null()) return;
  for (const json& accepted : values) {
    if (*value == accepted) return;
  }
  refuse(key, *value, "is not supported: " + implemented);
}

void ConfigReader::allow_null(const std::string& key) {
  const json* value = find(key);
  if (value != nullptr && !value->is_null()) {
    refuse(key, *value, "is not supported yet; remove it");
  }
}

void ConfigReader::ignore(const std::string& key) { seen_.insert(key); }

void ConfigReader::require_keras_module(const json& serialized, const std::string& module, const std::string& what) {
  const json found = serialized.value("module", json(nullptr));
  check_argument(found.is_null() || found == module,
                 what + " '" + serialized.value("class_name", std::string("?")) + "' from module " + found.dump() +
                     " is not a Keras built-in (module \"" + module + "\"); Tenfold never runs code from a file");
}

void ConfigReader::finish() const {
  for (const auto& [key, value] : config_.items()) {
    if (!seen_.contains(key)) refuse(key, value, "is not a setting Tenfold knows here");
  }
}

}  // namespace tenfold
