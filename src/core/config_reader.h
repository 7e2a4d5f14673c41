#pragma once
// A Keras config (a layer's, an optimizer's, a schedule's) read strictly. Every key is either
// read with its Keras meaning, or accepted only at the values that mean what Tenfold computes
// (e.g. dilation_rate 1, a null regularizer); finish() refuses every key left over. A setting
// Tenfold does not implement is an error naming the owner, the key and the value, never a model
// that loads and then computes something else.
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace tenfold {

class ConfigReader {
 public:
  /// `owner` names what the config configures in errors, e.g. "Conv2D 'conv1'" or "Adam".
  ConfigReader(std::string owner, const nlohmann::json& config);

  /// True when `key` is present, even as null (for keys where null means something:
  /// Normalization's axis=None).
  bool contains(const std::string& key) const { return config_.contains(key); }
  /// The value of `key`, or `fallback` when absent or null.
  template <typename T>
  T take(const std::string& key, T fallback) {
    const nlohmann::json* value = find(key);
    if (value == nullptr || value->is_null()) return fallback;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // get<int> would truncate 2.5 to 2: an integer must be one (2.0 is).
      if (value->is_number_float() && value->get<double>() != std::floor(value->get<double>())) {
        refuse(key, *value, "must be an integer");
      }
    }
    try {
      return value->get<T>();
    } catch (const nlohmann::json::exception&) {
      refuse(key, *value, "has the wrong type");
    }
  }
  /// The value of `key`, or nothing when absent or null.
  template <typename T>
  std::optional<T> take_optional(const std::string& key) {
    const nlohmann::json* value = find(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    return take<T>(key, T{});
  }
  /// A required value.
  template <typename T>
  T take_required(const std::string& key) {
    const nlohmann::json* value = find(key);
    if (value == nullptr || value->is_null()) refuse(key, nullptr, "is required");
    return take<T>(key, T{});
  }
  /// Accepts `key` only absent or equal to one of `values` (null is absent); `implemented`
  /// says what Tenfold does instead, for the error.
  void allow_only(const std::string& key, const std::vector<nlohmann::json>& values,
                  const std::string& implemented);
  /// Accepts `key` only absent or null (regularizers, constraints, LoRA, quantization).
  void allow_null(const std::string& key);
  /// Accepts `key` with any value: it does not change what is computed.
  void ignore(const std::string& key);
  /// Refuses every key not read or accepted above.
  void finish() const;

  /// Refuses a serialized Keras object ({"module", "class_name", ...}) whose module is not
  /// `module` (e.g. "keras.regularizers"): user code, which a file cannot bring. `what` names
  /// the kind of object in the error. A missing module (Keras 2) is accepted.
  static void require_keras_module(const nlohmann::json& serialized, const std::string& module, const std::string& what);

 protected:
  /// The value of `key` (marked as read), or nullptr when absent.
  const nlohmann::json* find(const std::string& key);
  [[noreturn]] void refuse(const std::string& key, const nlohmann::json& value,
                           const std::string& why) const;
  void set_owner(std::string owner) { owner_ = std::move(owner); }

 private:
  std::string owner_;
  const nlohmann::json& config_;
  std::set<std::string> seen_;
};

/// A config value that may be None: the value, or null as Keras writes None.
template <typename T>
nlohmann::json json_or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace tenfold
