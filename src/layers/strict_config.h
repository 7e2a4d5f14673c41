#pragma once
// A layer's Keras config, read strictly (core/config_reader.h), with the keys every layer has
// and the value kinds layers take.
#include <array>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config_reader.h"
#include "layers/dtype_policy.h"
#include "layers/initializers.h"

namespace tenfold::layers {

class StrictConfig : public ConfigReader {
 public:
  /// Reads the keys every layer has: name, trainable, dtype (a policy name or a Keras 3
  /// DTypePolicy).
  StrictConfig(const std::string& class_name, const nlohmann::json& config);

  /// The layer's name ("" when absent).
  const std::string& name() const { return name_; }
  /// Keras' trainable (true when absent).
  bool trainable() const { return trainable_; }
  /// The layer's dtype policy (float32 when absent).
  DTypePolicy dtype_policy() const { return dtype_policy_; }

  /// An integer or a pair of integers, as Keras' kernel_size, strides and pool_size.
  std::array<int64_t, 2> take_pair(const std::string& key, std::array<int64_t, 2> fallback);
  /// One axis: an integer, or Keras 2's list of one integer (BatchNormalization's [3]).
  int64_t take_axis(const std::string& key, int64_t fallback);
  /// A named activation ("linear" when absent or null).
  std::string take_activation();
  /// A built-in initializer, from a name or a {"class_name": ..., "config": ...} object.
  Initializer take_initializer(const std::string& key, const std::string& fallback);

 private:
  std::string name_;
  bool trainable_ = true;
  DTypePolicy dtype_policy_ = DTypePolicy::float32;
};

}  // namespace tenfold::layers
