#include "optimizers/optimizer.h"

#include <array>

#include "core/error.h"
#include "optimizers/adam.h"
#include "optimizers/rmsprop.h"
#include "optimizers/sgd.h"

namespace tenfold::optimizers {

nlohmann::json Optimizer::get_config() const {
  return {{"name", class_name()}, {"learning_rate", learning_rate_}};
}

void Optimizer::build(std::vector<Variable*> variables) {
  variables_ = std::move(variables);
  slots_.assign(variables_.size(), {});
  slot_pointers_.assign(variables_.size(), {});
  for (size_t i = 0; i < variables_.size(); ++i) {
    for (int s = 0; s < slots_per_variable(); ++s) {
      slots_[i].emplace_back(variables_[i]->value().shape());
      slot_pointers_[i].push_back(slots_[i].back().data<float>());
    }
  }
}

void Optimizer::apply_gradients(std::span<const Tensor> gradients, const RunParts& run_parts) {
  check_argument(gradients.size() == variables_.size(),
                 "optimizer built for " + std::to_string(variables_.size()) +
                     " variables got " + std::to_string(gradients.size()) + " gradients");
  begin_step();
  if (!run_parts) {
    for (size_t i = 0; i < variables_.size(); ++i) {
      Tensor& value = variables_[i]->value();
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
        update(value.data<float>() + begin, gradients[i].data<float>() + begin,
               std::span<float* const>(slots.data(), slot_pointers_[i].size()), end - begin);
      }
    });
  }
  ++iterations_;
}

std::shared_ptr<Optimizer> from_config(const nlohmann::json& optimizer) {
  check_argument(optimizer.is_object() && optimizer.contains("class_name"),
                 "an optimizer config needs 'class_name', got " + optimizer.dump().substr(0, 200));
  std::string name = optimizer.at("class_name").get<std::string>();
  nlohmann::json config = optimizer.value("config", nlohmann::json::object());
  auto number = [&](const char* key, float fallback) {
    auto found = config.find(key);
    return found == config.end() || found->is_null() ? fallback : found->get<float>();
  };
  for (const char* unsupported : {"weight_decay", "clipnorm", "global_clipnorm", "clipvalue",
                                  "loss_scale_factor", "gradient_accumulation_steps"}) {
    check_argument(!config.contains(unsupported) || config.at(unsupported).is_null(),
                   name + "'s '" + unsupported + "' is not supported by Tenfold yet");
  }
  if (name == "Adam") {
    check_argument(!config.value("amsgrad", false), "Adam's amsgrad is not supported by Tenfold yet");
    return std::make_shared<Adam>(number("learning_rate", 0.001f), number("beta_1", 0.9f),
                                  number("beta_2", 0.999f), number("epsilon", 1e-7f));
  }
  if (name == "SGD") {
    return std::make_shared<SGD>(number("learning_rate", 0.01f), number("momentum", 0),
                                 config.value("nesterov", false));
  }
  check_argument(!config.value("use_ema", false), name + "'s use_ema is not supported by Tenfold yet");
  if (name == "RMSprop") {
    check_argument(!config.value("centered", false), "RMSprop's centered=True is not supported by Tenfold yet");
    return std::make_shared<RMSprop>(number("learning_rate", 0.001f), number("rho", 0.9f),
                                     number("momentum", 0), number("epsilon", 1e-7f));
  }
  throw Error(ErrorCode::invalid_argument,
              "optimizer '" + name + "' is not supported; use Adam, SGD or RMSprop");
}

std::shared_ptr<Optimizer> get(const std::string& name) {
  if (name == "adam" || name == "Adam") return std::make_shared<Adam>();
  if (name == "sgd" || name == "SGD") return std::make_shared<SGD>();
  if (name == "rmsprop" || name == "RMSprop") return std::make_shared<RMSprop>();
  throw Error(ErrorCode::invalid_argument,
              "optimizer '" + name + "' is not supported; use adam, sgd or rmsprop");
}

}  // namespace tenfold::optimizers
