#pragma once
// A layer's Keras config, read strictly. Every key is either read with its Keras meaning, or
// accepted only at the values that mean what Tenfold computes (e.g. dilation_rate 1, a null
// regularizer); finish() refuses every key left over. A setting Tenfold does not implement is
// an error naming the layer, the key and the value, never a model that loads and then computes
// something else.
#include <array>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layers/initializers.h"

namespace tenfold::layers {

class StrictConfig {
 public:
  /// Reads the keys every layer has: name, trainable, dtype (float32 only, as a string or a
  /// Keras 3 DTypePolicy).
  StrictConfig(const std::string& class_name, const nlohmann::json& config);

  /// The layer's name ("" when absent).
  const std::string& name() const { return name_; }
  /// Keras' trainable (true when absent).
  bool trainable() const { return trainable_; }

  /// True when `key` is present, even as null (for keys where null means something:
  /// Normalization's axis=None).
  bool contains(const std::string& key) const { return config_.contains(key); }
  /// The value of `key`, or `fallback` when absent or null.
  template <typename T>
  T take(const std::string& key, T fallback) {
    const nlohmann::json* value = find(key);
    if (value == nullptr || value->is_null()) return fallback;
    try {
      return value->get<T>();
    } catch (const nlohmann::json::exception&) {
      refuse(key, *value, "has the wrong type");
    }
  }
  /// A required value.
  template <typename T>
  T take_required(const std::string& key) {
    const nlohmann::json* value = find(key);
    if (value == nullptr || value->is_null()) refuse(key, nullptr, "is required");
    return take<T>(key, T{});
  }
  /// An integer or a pair of integers, as Keras' kernel_size, strides and pool_size.
  std::array<int64_t, 2> take_pair(const std::string& key, std::array<int64_t, 2> fallback);
  /// One axis: an integer, or Keras 2's list of one integer (BatchNormalization's [3]).
  int64_t take_axis(const std::string& key, int64_t fallback);
  /// A named activation ("linear" when absent or null).
  std::string take_activation();
  /// A built-in initializer, from a name or a {"class_name": ..., "config": ...} object.
  Initializer take_initializer(const std::string& key, const std::string& fallback);
  /// Accepts `key` only absent or equal to one of `values` (null is absent); `implemented`
  /// says what Tenfold does instead, for the error.
  void allow_only(const std::string& key, const std::vector<nlohmann::json>& values,
                  const std::string& implemented);
  /// Accepts `key` only absent or null (regularizers, constraints, LoRA, quantization).
  void allow_null(const std::string& key);
  /// Accepts `key` with any value: it does not change what the layer computes.
  void ignore(const std::string& key);
  /// Refuses every key not read or accepted above.
  void finish() const;

 private:
  const nlohmann::json* find(const std::string& key);
  [[noreturn]] void refuse(const std::string& key, const nlohmann::json& value,
                           const std::string& why) const;

  std::string class_name_;
  const nlohmann::json& config_;
  std::string name_;
  bool trainable_ = true;
  std::set<std::string> seen_;
};

}  // namespace tenfold::layers
