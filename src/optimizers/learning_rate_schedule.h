#pragma once
// keras.optimizers.schedules: a learning rate as a function of the optimizer's step (Keras'
// optimizer.iterations before the update), with Keras' formulas and configs.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace tenfold::optimizers {

class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  /// The learning rate at `step`.
  virtual double operator()(int64_t step) const = 0;
  /// Keras' class name, e.g. "ExponentialDecay".
  virtual std::string class_name() const = 0;
  virtual nlohmann::json get_config() const = 0;
};

/// From Keras' serialized schedule {"class_name": "CosineDecay", "config": {...}} (a
/// module "keras.optimizers.schedules" and registered_name null, if present). Every key is read
/// with Keras' meaning or refused.
std::shared_ptr<const LearningRateSchedule> schedule_from_config(const nlohmann::json& schedule);
/// As Keras serializes it inside an optimizer's config.
nlohmann::json serialize(const LearningRateSchedule& schedule);

}  // namespace tenfold::optimizers
