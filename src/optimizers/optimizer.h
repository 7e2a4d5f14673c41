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
#include "optimizers/learning_rate_schedule.h"

namespace tenfold::optimizers {

/// What every Keras optimizer may do besides its update, in Keras' order: accumulate the
/// gradients of gradient_accumulation_steps calls and update with their mean on the last, clip
/// the gradients (clipnorm per variable, global_clipnorm over all, clipvalue per element), then
/// decay the weights (w -= w * weight_decay * lr). Unset: not done.
struct GradientOptions {
  std::optional<float> weight_decay, clipnorm, global_clipnorm, clipvalue;
  std::optional<int> gradient_accumulation_steps;
};

/// One of Keras' optimizer.variables after `iteration` and `learning_rate`: a slot of trainable
/// variable `variable` (native layout), or with no variable a scalar of the optimizer's own
/// (Nadam's u_product).
struct KerasVariable {
  std::optional<size_t> variable;
  std::string name;
  Tensor* value;
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

  /// Throws, saying why, when apply_gradients would refuse: bfloat16 variables (the bfloat16
  /// policy's) this optimizer cannot update as Keras does. Not in build(): a model that cannot
  /// train still loads, predicts and evaluates.
  void check_can_update() const;

  /// Number of apply_gradients calls so far (Keras' optimizer._iterations, saved in files).
  int64_t iterations() const { return iterations_; }
  /// Number of updates so far: iterations() / gradient_accumulation_steps (Keras'
  /// optimizer.iterations, the step of the bias corrections).
  int64_t update_steps() const;
  /// Restores it (loading a model file).
  void set_iterations(int64_t iterations) { iterations_ = iterations; }
  /// The slots this configuration uses, grouped as Keras creates them: a group holds its slots
  /// of every variable in turn (Adam {{"momentum", "velocity"}}: m0, v0, m1, v1, ...), and the
  /// groups follow one another (RMSprop {{"velocity"}, {"momentum"}}: all velocities, then all
  /// momentums). A slot's index (update()'s `slots`, slot()) is its place in the flattened list.
  virtual std::vector<std::vector<std::string>> slot_groups() const = 0;
  /// The slot names, flattened.
  std::vector<std::string> slot_names() const;
  /// Keras' optimizer.variables after iteration and learning_rate, in Keras' order (built
  /// optimizers only).
  std::vector<KerasVariable> keras_variables();

  /// The learning rate of the next update (the schedule's at iterations(), when there is one).
  float learning_rate() const;
  /// A constant learning rate; refused with a schedule, as in Keras.
  void set_learning_rate(float learning_rate);
  void set_learning_rate_schedule(std::shared_ptr<const LearningRateSchedule> schedule) { schedule_ = std::move(schedule); }
  const LearningRateSchedule* learning_rate_schedule() const { return schedule_.get(); }
  /// Slot `slot` of variable `index`, native layout.
  Tensor& slot(size_t index, int slot) { return slots_.at(index).at(static_cast<size_t>(slot)); }

 protected:
  static constexpr size_t max_slots = 4;
  /// Scalars of the optimizer's own that Keras lists after the slots (Nadam's u_product).
  virtual std::vector<std::pair<std::string, Tensor*>> keras_scalars() { return {}; }
  /// The value each slot starts at (Adagrad's accumulator: initial_accumulator_value).
  virtual float initial_slot_value(int) const { return 0; }
  /// Called once per update, before it (update_steps() not yet incremented).
  virtual void begin_step() {}
  /// value -= f(gradient, slots) over `count` elements (threaded with OpenMP).
  virtual void update(float* value, const float* gradient, std::span<float* const> slots,
                      int64_t count) = 0;
  /// Why this optimizer cannot update a bfloat16 variable (the bfloat16 policy's), or empty
  /// when it can: update_bfloat16 then rounds after every operation, as Keras does.
  virtual std::string bfloat16_refusal() const;
  /// The refusal of a bfloat16 update whose beta (name, value) is 1.0 in bfloat16, with what
  /// Keras then does (`outcome`); empty when no beta is.
  std::string bfloat16_beta_refusal(std::initializer_list<std::pair<const char*, float>> betas,
                                    const std::string& outcome) const;
  /// The variables of build().
  const std::vector<Variable*>& variables() const { return variables_; }
  /// update() for a bfloat16 variable: value, gradient and slots hold bfloat16 values.
  virtual void update_bfloat16(float* value, const float* gradient, std::span<float* const> slots,
                               int64_t count);

 private:
  /// clipnorm, global_clipnorm, clipvalue.
  void clip(std::span<Tensor> gradients) const;
  /// Weight decay, then update() or update_bfloat16() by the variable's dtype, on elements
  /// [value, value + count) of variable `index`.
  void update_variable(size_t index, float* value, const float* gradient, std::span<float* const> slots,
                       int64_t count);
  /// With gradient_accumulation_steps: adds the gradients to the accumulators and returns
  /// false, or on the last call of a cycle replaces them by the mean and returns true.
  bool accumulate(std::span<Tensor> gradients);

  float learning_rate_;
  std::shared_ptr<const LearningRateSchedule> schedule_;
  GradientOptions gradient_options_;
  int64_t iterations_ = 0;
  std::vector<Variable*> variables_;
  std::vector<Tensor> accumulators_;  // per variable, with gradient_accumulation_steps
  std::vector<std::vector<Tensor>> slots_;
  std::vector<std::vector<float*>> slot_pointers_;  // built once, so a step allocates nothing
};

/// By Keras name ("adam", "adamw", "adamax", "nadam", "adagrad", "adadelta", "lion", "sgd",
/// "rmsprop"), with Keras' defaults.
std::shared_ptr<Optimizer> get(const std::string& name);
/// From a Keras optimizer config {"class_name": "Adam", "config": {...}} (get_config's). Every
/// key is read with Keras' meaning or refused.
std::shared_ptr<Optimizer> from_config(const nlohmann::json& optimizer);

}  // namespace tenfold::optimizers
