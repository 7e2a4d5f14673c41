#include "optimizers/optimizer.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.h"
#include "optimizers/adagrad.h"
#include "optimizers/adam.h"
#include "optimizers/adamax.h"
#include "optimizers/lion.h"
#include "optimizers/rmsprop.h"
#include "optimizers/sgd.h"

namespace tenfold::optimizers {

nlohmann::json Optimizer::get_config() const {
  nlohmann::json config = {{"name", class_name()}, {"learning_rate", learning_rate_}};
  auto optional = [](const std::optional<float>& value) { return value ? nlohmann::json(*value) : nlohmann::json(nullptr); };
  config["weight_decay"] = optional(gradient_options_.weight_decay);
  config["clipnorm"] = optional(gradient_options_.clipnorm);
  config["global_clipnorm"] = optional(gradient_options_.global_clipnorm);
  config["clipvalue"] = optional(gradient_options_.clipvalue);
  return config;
}

void Optimizer::set_gradient_options(const GradientOptions& options) {
  check_argument(int(bool(options.clipnorm)) + int(bool(options.global_clipnorm)) + int(bool(options.clipvalue)) <= 1,
                 class_name() + ": only one of clipnorm, global_clipnorm and clipvalue can be set (as in Keras)");
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

void Optimizer::build(std::vector<Variable*> variables) {
  variables_ = std::move(variables);
  slots_.assign(variables_.size(), {});
  slot_pointers_.assign(variables_.size(), {});
  for (size_t i = 0; i < variables_.size(); ++i) {
    for (int s = 0; s < slots_per_variable(); ++s) {
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
  clip(gradients);
  begin_step();
  // Keras' decoupled weight decay, before the update: w = w - w * weight_decay * lr.
  const std::optional<float> decay = gradient_options_.weight_decay;
  const float lr = learning_rate_;
  auto decay_weights = [decay, lr](float* value, int64_t count) {
    if (!decay) return;
    for (int64_t i = 0; i < count; ++i) value[i] = value[i] - value[i] * *decay * lr;
  };
  if (!run_parts) {
    for (size_t i = 0; i < variables_.size(); ++i) {
      Tensor& value = variables_[i]->value();
      decay_weights(value.data<float>(), value.num_elements());
      update(value.data<float>(), gradients[i].data<float>(), slot_pointers_[i],
             value.num_elements());
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
        decay_weights(value.data<float>() + begin, end - begin);
        update(value.data<float>() + begin, gradients[i].data<float>() + begin,
               std::span<float* const>(slots.data(), slot_pointers_[i].size()), end - begin);
      }
    });
  }
  ++iterations_;
}

namespace {

template <typename Number>
std::shared_ptr<Optimizer> make_from_config(const std::string& name, const nlohmann::json& config,
                                            const Number& number) {
  if (name == "Adam" || name == "AdamW") {
    check_argument(!config.value("amsgrad", false), name + "'s amsgrad is not supported by Tenfold yet");
    if (name == "AdamW") {
      return std::make_shared<AdamW>(number("learning_rate", 0.001f), number("beta_1", 0.9f),
                                     number("beta_2", 0.999f), number("epsilon", 1e-7f));
    }
    return std::make_shared<Adam>(number("learning_rate", 0.001f), number("beta_1", 0.9f),
                                  number("beta_2", 0.999f), number("epsilon", 1e-7f));
  }
  if (name == "Adamax") {
    return std::make_shared<Adamax>(number("learning_rate", 0.001f), number("beta_1", 0.9f),
                                    number("beta_2", 0.999f), number("epsilon", 1e-7f));
  }
  if (name == "Adagrad") {
    return std::make_shared<Adagrad>(number("learning_rate", 0.001f),
                                     number("initial_accumulator_value", 0.1f), number("epsilon", 1e-7f));
  }
  if (name == "Lion") {
    return std::make_shared<Lion>(number("learning_rate", 0.001f), number("beta_1", 0.9f), number("beta_2", 0.99f));
  }
  if (name == "SGD") {
    return std::make_shared<SGD>(number("learning_rate", 0.01f), number("momentum", 0),
                                 config.value("nesterov", false));
  }
  if (name == "RMSprop") {
    check_argument(!config.value("centered", false), "RMSprop's centered=True is not supported by Tenfold yet");
    return std::make_shared<RMSprop>(number("learning_rate", 0.001f), number("rho", 0.9f),
                                     number("momentum", 0), number("epsilon", 1e-7f));
  }
  throw Error(ErrorCode::invalid_argument, "optimizer '" + name +
                                               "' is not supported; use Adam, AdamW, Adamax, Adagrad, Lion, SGD or RMSprop");
}

}  // namespace

std::shared_ptr<Optimizer> from_config(const nlohmann::json& optimizer) {
  check_argument(optimizer.is_object() && optimizer.contains("class_name"),
                 "an optimizer config needs 'class_name', got " + optimizer.dump().substr(0, 200));
  std::string name = optimizer.at("class_name").get<std::string>();
  nlohmann::json config = optimizer.value("config", nlohmann::json::object());
  auto number = [&](const char* key, float fallback) {
    auto found = config.find(key);
    return found == config.end() || found->is_null() ? fallback : found->get<float>();
  };
  for (const char* unsupported : {"loss_scale_factor", "gradient_accumulation_steps"}) {
    check_argument(!config.contains(unsupported) || config.at(unsupported).is_null(),
                   name + "'s '" + unsupported + "' is not supported by Tenfold yet");
  }
  check_argument(!config.value("use_ema", false), name + "'s use_ema is not supported by Tenfold yet");
  auto optional = [&](const char* key) {
    auto found = config.find(key);
    return found == config.end() || found->is_null() ? std::nullopt : std::optional<float>(found->get<float>());
  };
  std::shared_ptr<Optimizer> result = make_from_config(name, config, number);
  GradientOptions options{.weight_decay = optional("weight_decay"), .clipnorm = optional("clipnorm"),
                          .global_clipnorm = optional("global_clipnorm"), .clipvalue = optional("clipvalue")};
  if (!config.contains("weight_decay")) options.weight_decay = result->gradient_options().weight_decay;  // AdamW's 0.004
  result->set_gradient_options(options);
  return result;
}

std::shared_ptr<Optimizer> get(const std::string& name) {
  if (name == "adam" || name == "Adam") return std::make_shared<Adam>();
  if (name == "adamw" || name == "AdamW") return std::make_shared<AdamW>();
  if (name == "adamax" || name == "Adamax") return std::make_shared<Adamax>();
  if (name == "adagrad" || name == "Adagrad") return std::make_shared<Adagrad>();
  if (name == "lion" || name == "Lion") return std::make_shared<Lion>();
  if (name == "sgd" || name == "SGD") return std::make_shared<SGD>();
  if (name == "rmsprop" || name == "RMSprop") return std::make_shared<RMSprop>();
  throw Error(ErrorCode::invalid_argument, "optimizer '" + name +
                                               "' is not supported; use adam, adamw, adamax, adagrad, lion, sgd or rmsprop");
}

}  // namespace tenfold::optimizers
