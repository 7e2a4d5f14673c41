#include "optimizers/optimizer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "core/config_reader.h"
#include "core/error.h"
#include "kernels/bfloat16.h"
#include "optimizers/adadelta.h"
#include "optimizers/adagrad.h"
#include "optimizers/adam.h"
#include "optimizers/adamax.h"
#include "optimizers/lion.h"
#include "optimizers/nadam.h"
#include "optimizers/rmsprop.h"
#include "optimizers/sgd.h"

namespace tenfold::optimizers {

nlohmann::json Optimizer::get_config() const {
  nlohmann::json config = {{"name", class_name()},
                           {"learning_rate", schedule_ ? serialize(*schedule_) : nlohmann::json(learning_rate_)}};
  config["weight_decay"] = json_or_null(gradient_options_.weight_decay);
  config["clipnorm"] = json_or_null(gradient_options_.clipnorm);
  config["global_clipnorm"] = json_or_null(gradient_options_.global_clipnorm);
  config["clipvalue"] = json_or_null(gradient_options_.clipvalue);
  config["gradient_accumulation_steps"] = json_or_null(gradient_options_.gradient_accumulation_steps);
  return config;
}

float Optimizer::learning_rate() const {
  return schedule_ ? float((*schedule_)(iterations_)) : learning_rate_;
}

void Optimizer::set_learning_rate(float learning_rate) {
  check_argument(!schedule_, class_name() + "'s learning rate is a " + (schedule_ ? schedule_->class_name() : "") +
                                 " schedule and cannot be set (as in Keras); use a constant learning rate with "
                                 "callbacks that change it");
  learning_rate_ = learning_rate;
}

int64_t Optimizer::update_steps() const {
  return iterations_ / gradient_options_.gradient_accumulation_steps.value_or(1);
}

std::vector<std::string> Optimizer::slot_names() const {
  std::vector<std::string> names;
  for (const auto& group : slot_groups()) names.insert(names.end(), group.begin(), group.end());
  return names;
}

std::vector<KerasVariable> Optimizer::keras_variables() {
  std::vector<KerasVariable> result;
  for (size_t i = 0; i < accumulators_.size(); ++i) result.push_back({i, "gradient_accumulator", &accumulators_[i]});
  int first = 0;
  for (const auto& group : slot_groups()) {
    for (size_t i = 0; i < variables_.size(); ++i) {
      for (size_t k = 0; k < group.size(); ++k) result.push_back({i, group[k], &slot(i, first + int(k))});
    }
    first += int(group.size());
  }
  for (auto [name, value] : keras_scalars()) result.push_back({std::nullopt, name, value});
  return result;
}

void Optimizer::set_gradient_options(const GradientOptions& options) {
  check_argument(int(bool(options.clipnorm)) + int(bool(options.global_clipnorm)) + int(bool(options.clipvalue)) <= 1,
                 class_name() + ": only one of clipnorm, global_clipnorm and clipvalue can be set (as in Keras)");
  check_argument(!options.gradient_accumulation_steps || *options.gradient_accumulation_steps >= 2,
                 class_name() + ": gradient_accumulation_steps must be an integer >= 2 (as in Keras), got " +
                     std::to_string(options.gradient_accumulation_steps.value_or(0)));
  check_argument(!built(), class_name() + ": set the gradient options before the optimizer is built");
  gradient_options_ = options;
}

void Optimizer::clip(std::span<Tensor> gradients) const {
  const GradientOptions& o = gradient_options_;
  auto squared_norm = [](const Tensor& gradient) {
    double sum = 0;
    for (float g : gradient.values<float>()) sum += double(g) * g;
    return sum;
  };
  auto scale = [](Tensor& gradient, double factor) {
    for (float& g : gradient.values<float>()) g = float(g * factor);
  };
  if (o.clipnorm) {  // g * c / max(|g|, c), per variable
    for (Tensor& gradient : gradients) scale(gradient, *o.clipnorm / std::max(std::sqrt(squared_norm(gradient)), double(*o.clipnorm)));
  } else if (o.global_clipnorm) {
    double total = 0;
    for (const Tensor& gradient : gradients) total += squared_norm(gradient);
    const double factor = *o.global_clipnorm * std::min(1 / std::sqrt(total), 1 / double(*o.global_clipnorm));
    for (Tensor& gradient : gradients) scale(gradient, factor);
  } else if (o.clipvalue) {
    for (Tensor& gradient : gradients) {
      for (float& g : gradient.values<float>()) g = std::clamp(g, -*o.clipvalue, *o.clipvalue);
    }
  }
}

std::string Optimizer::bfloat16_refusal() const {
  return class_name() + " does not update bfloat16 variables yet; use one of Keras' optimizers (SGD, Adam, "
                        "AdamW, Nadam, RMSprop, Adagrad, Adadelta, Adamax, Lion) or the mixed_bfloat16 policy "
                        "(float32 variables, bfloat16 compute)";
}

std::string Optimizer::bfloat16_beta_refusal(std::initializer_list<std::pair<const char*, float>> betas,
                                             const std::string& outcome) const {
  for (auto [name, beta] : betas) {
    if (float(kernels::Bfloat16Number(beta)) != 1.0f) continue;
    std::ostringstream message;
    message << class_name() << "'s " << name << " = " << beta << " is 1.0 in bfloat16, so Keras' " << class_name()
            << " " << outcome << "; use the mixed_bfloat16 policy (float32 variables, bfloat16 compute), or a "
            << name << " that bfloat16 holds below 1 (at most 0.998)";
    return message.str();
  }
  return "";
}

void Optimizer::update_bfloat16(float*, const float*, std::span<float* const>, int64_t) {
  throw Error(ErrorCode::internal, class_name() + ": update_bfloat16 called though check_can_update() refuses it");
}

void Optimizer::check_can_update() const {
  for (const Variable* variable : variables_) {
    if (variable->dtype() != DType::bfloat16) continue;
    const std::string refusal = bfloat16_refusal();
    check_argument(refusal.empty(), "under the bfloat16 policy (weight '" + variable->name() + "' is bfloat16): " + refusal);
    const GradientOptions& o = gradient_options_;
    check_argument(!o.clipnorm && !o.global_clipnorm && !o.clipvalue,
                   "under the bfloat16 policy (weight '" + variable->name() + "' is bfloat16): " + class_name() +
                       "'s clipnorm, global_clipnorm and clipvalue are not supported yet; use the mixed_bfloat16 "
                       "policy (float32 variables, bfloat16 compute)");
    return;
  }
}

void Optimizer::build(std::vector<Variable*> variables) {
  variables_ = std::move(variables);
  slots_.assign(variables_.size(), {});
  slot_pointers_.assign(variables_.size(), {});
  accumulators_.clear();
  const size_t slots = slot_names().size();
  check_argument(slots <= max_slots, class_name() + " uses more than " + std::to_string(max_slots) + " slots");
  for (size_t i = 0; i < variables_.size(); ++i) {
    if (gradient_options_.gradient_accumulation_steps) {
      accumulators_.emplace_back(variables_[i]->value().shape());
      accumulators_.back().fill_zero();
    }
    for (int s = 0; s < int(slots); ++s) {
      slots_[i].emplace_back(variables_[i]->value().shape());
      for (float& v : slots_[i].back().values<float>()) v = initial_slot_value(s);
      slot_pointers_[i].push_back(slots_[i].back().data<float>());
    }
  }
}

void Optimizer::apply_gradients(std::span<Tensor> gradients, const RunParts& run_parts) {
  check_argument(gradients.size() == variables_.size(),
                 "optimizer built for " + std::to_string(variables_.size()) +
                     " variables got " + std::to_string(gradients.size()) + " gradients");
  check_can_update();
  if (!accumulate(gradients)) {
    ++iterations_;
    return;
  }
  clip(gradients);
  begin_step();
  if (!run_parts) {
    for (size_t i = 0; i < variables_.size(); ++i) {
      Tensor& value = variables_[i]->value();
      update_variable(i, value.data<float>(), gradients[i].data<float>(), slot_pointers_[i], value.num_elements());
    }
  } else {
    // Each part updates one contiguous slice of every variable (elementwise updates: the
    // slices are independent).
    run_parts([&](int part, int parts) {
      std::array<float*, max_slots> slots;
      for (size_t i = 0; i < variables_.size(); ++i) {
        Tensor& value = variables_[i]->value();
        int64_t count = value.num_elements();
        int64_t begin = count * part / parts, end = count * (part + 1) / parts;
        for (size_t k = 0; k < slot_pointers_[i].size(); ++k) slots[k] = slot_pointers_[i][k] + begin;
        update_variable(i, value.data<float>() + begin, gradients[i].data<float>() + begin,
                        std::span<float* const>(slots.data(), slot_pointers_[i].size()), end - begin);
      }
    });
  }
  ++iterations_;
}

namespace {

/// Keras' decoupled weight decay: w = w - w * weight_decay * lr.
template <typename Number>
void decay_weights(float* value, int64_t count, float weight_decay, float learning_rate) {
  const Number decay(weight_decay), lr(learning_rate);
  for (int64_t i = 0; i < count; ++i) {
    const Number w(value[i]);
    value[i] = float(w - w * decay * lr);
  }
}

}  // namespace

void Optimizer::update_variable(size_t index, float* value, const float* gradient, std::span<float* const> slots,
                                int64_t count) {
  const bool bfloat16 = variables_[index]->dtype() == DType::bfloat16;
  if (const std::optional<float> decay = gradient_options_.weight_decay) {
    if (bfloat16) {
      decay_weights<kernels::Bfloat16Number>(value, count, *decay, learning_rate());
    } else {
      decay_weights<float>(value, count, *decay, learning_rate());
    }
  }
  if (bfloat16) {
    update_bfloat16(value, gradient, slots, count);
  } else {
    update(value, gradient, slots, count);
  }
}

namespace {

/// One variable's gradient accumulation in Keras' operations, in float32 or bfloat16
/// arithmetic: sum += g, or on an update step g = (g + sum) / steps and sum = 0.
template <typename Number>
void accumulate_gradient(float* gradient, float* sum, int64_t count, bool update, int steps) {
  if (!update) {
    for (int64_t e = 0; e < count; ++e) sum[e] = float(Number(sum[e]) + Number(gradient[e]));
    return;
  }
  const Number divisor(static_cast<float>(steps));
  for (int64_t e = 0; e < count; ++e) {
    gradient[e] = float((Number(gradient[e]) + Number(sum[e])) / divisor);
    sum[e] = 0.0f;
  }
}

}  // namespace

bool Optimizer::accumulate(std::span<Tensor> gradients) {
  if (!gradient_options_.gradient_accumulation_steps) return true;
  const int steps = *gradient_options_.gradient_accumulation_steps;
  const bool update = (iterations_ + 1) % steps == 0;
  for (size_t i = 0; i < gradients.size(); ++i) {
    float* sum = accumulators_[i].data<float>();
    float* gradient = gradients[i].data<float>();
    const int64_t count = gradients[i].num_elements();
    if (variables_[i]->dtype() == DType::bfloat16) {
      accumulate_gradient<kernels::Bfloat16Number>(gradient, sum, count, update, steps);
    } else {
      accumulate_gradient<float>(gradient, sum, count, update, steps);
    }
  }
  return update;
}

namespace {

/// The optimizer `name` from its own keys (those every optimizer has are read by from_config);
/// `learning_rate(fallback)` reads the constant learning rate, Keras' default for the class
/// when absent.
std::shared_ptr<Optimizer> make_from_config(const std::string& name, ConfigReader& c,
                                            const std::function<float(float)>& learning_rate) {
  auto number = [&](const char* key, float fallback) { return c.take<float>(key, fallback); };
  if (name == "Adam" || name == "AdamW") {
    const float lr = learning_rate(0.001f), beta_1 = number("beta_1", 0.9f), beta_2 = number("beta_2", 0.999f),
                epsilon = number("epsilon", 1e-7f);
    const bool amsgrad = c.take("amsgrad", false);
    if (name == "AdamW") return std::make_shared<AdamW>(lr, beta_1, beta_2, epsilon, 0.004f, amsgrad);
    return std::make_shared<Adam>(lr, beta_1, beta_2, epsilon, amsgrad);
  }
  if (name == "Adamax") {
    return std::make_shared<Adamax>(learning_rate(0.001f), number("beta_1", 0.9f), number("beta_2", 0.999f),
                                    number("epsilon", 1e-7f));
  }
  if (name == "Nadam") {
    return std::make_shared<Nadam>(learning_rate(0.001f), number("beta_1", 0.9f), number("beta_2", 0.999f),
                                   number("epsilon", 1e-7f));
  }
  if (name == "Adagrad") {
    return std::make_shared<Adagrad>(learning_rate(0.001f), number("initial_accumulator_value", 0.1f),
                                     number("epsilon", 1e-7f));
  }
  if (name == "Adadelta") {
    return std::make_shared<Adadelta>(learning_rate(0.001f), number("rho", 0.95f), number("epsilon", 1e-7f));
  }
  if (name == "Lion") {
    return std::make_shared<Lion>(learning_rate(0.001f), number("beta_1", 0.9f), number("beta_2", 0.99f));
  }
  if (name == "SGD") {
    return std::make_shared<SGD>(learning_rate(0.01f), number("momentum", 0), c.take("nesterov", false));
  }
  if (name == "RMSprop") {
    return std::make_shared<RMSprop>(learning_rate(0.001f), number("rho", 0.9f), number("momentum", 0),
                                     number("epsilon", 1e-7f), c.take("centered", false));
  }
  throw Error(ErrorCode::invalid_argument,
              "optimizer '" + name + "' is not supported; use Adam, AdamW, Adamax, Nadam, Adagrad, Adadelta, Lion, SGD or RMSprop");
}

}  // namespace

std::shared_ptr<Optimizer> from_config(const nlohmann::json& optimizer) {
  check_argument(optimizer.is_object() && optimizer.contains("class_name"),
                 "an optimizer config needs 'class_name', got " + optimizer.dump().substr(0, 200));
  const std::string name = optimizer.at("class_name").get<std::string>();
  const nlohmann::json config = optimizer.value("config", nlohmann::json::object());
  ConfigReader c(name, config);
  c.ignore("name");
  // A schedule, or a number read with the class's default.
  std::shared_ptr<const LearningRateSchedule> schedule;
  if (config.contains("learning_rate") && config.at("learning_rate").is_object()) {
    schedule = schedule_from_config(config.at("learning_rate"));
    c.ignore("learning_rate");
  }
  auto learning_rate = [&](float fallback) { return schedule ? fallback : c.take<float>("learning_rate", fallback); };
  std::shared_ptr<Optimizer> result = make_from_config(name, c, learning_rate);
  result->set_learning_rate_schedule(schedule);

  GradientOptions options = result->gradient_options();  // AdamW's weight decay unless given
  if (c.contains("weight_decay")) options.weight_decay = c.take_optional<float>("weight_decay");
  options.clipnorm = c.take_optional<float>("clipnorm");
  options.global_clipnorm = c.take_optional<float>("global_clipnorm");
  options.clipvalue = c.take_optional<float>("clipvalue");
  options.gradient_accumulation_steps = c.take_optional<int>("gradient_accumulation_steps");
  result->set_gradient_options(options);
  c.allow_only("use_ema", {false}, "no exponential moving average of the weights");
  c.ignore("ema_momentum");             // used only with use_ema
  c.ignore("ema_overwrite_frequency");  // used only with use_ema
  c.allow_null("loss_scale_factor");
  // Keras 2's: decay (Keras 3 ignores it, so only 0 means the same), jit_compile (how TF
  // compiles, not what), is_legacy_optimizer.
  c.allow_only("decay", {0, 0.0}, "Keras 3 has no decay argument; use a learning rate schedule");
  c.ignore("jit_compile");
  c.allow_only("is_legacy_optimizer", {false}, "Keras 2's legacy optimizers are not supported");
  c.finish();
  return result;
}

std::shared_ptr<Optimizer> get(const std::string& name) {
  if (name == "adam" || name == "Adam") return std::make_shared<Adam>();
  if (name == "adamw" || name == "AdamW") return std::make_shared<AdamW>();
  if (name == "adamax" || name == "Adamax") return std::make_shared<Adamax>();
  if (name == "nadam" || name == "Nadam") return std::make_shared<Nadam>();
  if (name == "adadelta" || name == "Adadelta") return std::make_shared<Adadelta>();
  if (name == "adagrad" || name == "Adagrad") return std::make_shared<Adagrad>();
  if (name == "lion" || name == "Lion") return std::make_shared<Lion>();
  if (name == "sgd" || name == "SGD") return std::make_shared<SGD>();
  if (name == "rmsprop" || name == "RMSprop") return std::make_shared<RMSprop>();
  throw Error(ErrorCode::invalid_argument, "optimizer '" + name +
                                               "' is not supported; use adam, adamw, adamax, nadam, adagrad, adadelta, lion, sgd or rmsprop");
}

}  // namespace tenfold::optimizers
