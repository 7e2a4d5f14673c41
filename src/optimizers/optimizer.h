#pragma once
// Keras optimizers. Updates run elementwise on each variable's native storage (whatever layout
// the kernels chose): gradients and slots share that layout, so no reorder is ever needed.
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layers/variable.h"

namespace tenfold::optimizers {

/// What every Keras optimizer may do besides its update, in Keras' order: clip the gradients
/// (clipnorm per variable, global_clipnorm over all, clipvalue per element), then decay the
/// weights (w -= w * weight_decay * lr). Unset: not done.
struct GradientOptions {
  std::optional<float> weight_decay, clipnorm, global_clipnorm, clipvalue;
};

class Optimizer {
 public:
  explicit Optimizer(float learning_rate) : learning_rate_(learning_rate) {}
  virtual ~Optimizer() = default;
  /// Keras class name, e.g. "Adam".
  virtual std::string class_name() const = 0;
  virtual nlohmann::json get_config() const;

  /// Creates zeroed slots (Adam's m and v, ...) for these variables.
  void build(std::vector<Variable*> variables);
  bool built() const { return !variables_.empty(); }
  /// Runs task(part, parts) for every part, side by side (e.g. on a strategy's replicas).
  using RunParts = std::function<void(const std::function<void(int part, int parts)>& task)>;
  /// Updates every variable from its gradient (native layout, order of build()). With
  /// `run_parts`, the elements are split into parts updated side by side; without, the update
  /// is threaded with OpenMP on the calling thread.
  /// Gradients are clipped in place.
  void apply_gradients(std::span<Tensor> gradients, const RunParts& run_parts = {});
  const GradientOptions& gradient_options() const { return gradient_options_; }
  /// At most one of clipnorm, global_clipnorm and clipvalue, as in Keras.
  void set_gradient_options(const GradientOptions& options);

  /// Number of updates applied so far (Keras' optimizer.iterations).
  int64_t iterations() const { return iterations_; }
  /// Restores it (loading a model file).
  void set_iterations(int64_t iterations) { iterations_ = iterations; }
  /// Keras' names of the slots a model file holds, in slot order, e.g. {"momentum",
  /// "velocity"} for Adam; slots beyond these are unused by the configuration.
  virtual std::vector<std::string> slot_names() const = 0;
  /// True when Keras lists each variable's slots together (Adam: m0, v0, m1, v1, ...); false
  /// when it lists all of one slot, then all of the next (RMSprop: all velocities, then all
  /// momentums), as its optimizer.variables are built.
  virtual bool keras_interleaves_slots() const { return true; }
  float learning_rate() const { return learning_rate_; }
  void set_learning_rate(float learning_rate) { learning_rate_ = learning_rate; }
  /// Slot `slot` of variable `index`, native layout.
  Tensor& slot(size_t index, int slot) { return slots_.at(index).at(static_cast<size_t>(slot)); }

 protected:
  static constexpr size_t max_slots = 4;
  /// At most max_slots.
  virtual int slots_per_variable() const = 0;
  /// The value each slot starts at (Adagrad's accumulator: initial_accumulator_value).
  virtual float initial_slot_value(int) const { return 0; }
  /// Called once per apply_gradients, before the updates (iterations() not yet incremented).
  virtual void begin_step() {}
  /// value -= f(gradient, slots) over `count` elements (threaded with OpenMP).
  virtual void update(float* value, const float* gradient, std::span<float* const> slots,
                      int64_t count) = 0;

 private:
  /// clipnorm, global_clipnorm, clipvalue.
  void clip(std::span<Tensor> gradients) const;

  float learning_rate_;
  GradientOptions gradient_options_;
  int64_t iterations_ = 0;
  std::vector<Variable*> variables_;
  std::vector<std::vector<Tensor>> slots_;
  std::vector<std::vector<float*>> slot_pointers_;  // built once, so a step allocates nothing
};

/// By Keras name ("adam", "adamw", "adamax", "adagrad", "lion", "sgd", "rmsprop"), with Keras'
/// defaults.
std::shared_ptr<Optimizer> get(const std::string& name);
/// From a Keras optimizer config {"class_name": "Adam", "config": {...}} (get_config's).
std::shared_ptr<Optimizer> from_config(const nlohmann::json& optimizer);

}  // namespace tenfold::optimizers
