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

void ConfigReader::finish() const {
  for (const auto& [key, value] : config_.items()) {
    if (!seen_.contains(key)) refuse(key, value, "is not a setting Tenfold knows here");
  }
}

}  // namespace tenfold
