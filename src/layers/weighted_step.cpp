#include "layers/weighted_step.h"

#include "layers/initializers.h"

namespace tenfold {

void add_weighted_config(nlohmann::json& config, const std::string& activation, bool use_bias,
                         const Initializer& kernel_initializer, const Initializer& bias_initializer) {
  config["activation"] = activation;
  config["use_bias"] = use_bias;
  config["kernel_initializer"] = kernel_initializer.get_config();
  config["bias_initializer"] = bias_initializer.get_config();
  for (const char* key : {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
                          "kernel_constraint", "bias_constraint"}) {
    config[key] = nullptr;
  }
}

}  // namespace tenfold
