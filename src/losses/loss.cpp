#include "losses/loss.h"

#include "core/error.h"
#include "losses/crossentropy.h"
#include "losses/mean_squared_error.h"

namespace tenfold::losses {

nlohmann::json Loss::get_config() const {
  return {{"name", name()}, {"reduction", "sum_over_batch_size"}};
}

void Loss::validate_targets(const Tensor&, const Shape&) const {}

std::shared_ptr<Loss> get(const std::string& name) {
  if (name == "sparse_categorical_crossentropy" || name == "SparseCategoricalCrossentropy") {
    return std::make_shared<SparseCategoricalCrossentropy>();
  }
  if (name == "categorical_crossentropy" || name == "CategoricalCrossentropy") {
    return std::make_shared<CategoricalCrossentropy>();
  }
  if (name == "mean_squared_error" || name == "mse" || name == "MeanSquaredError") {
    return std::make_shared<MeanSquaredError>();
  }
  throw Error(ErrorCode::invalid_argument,
              "loss '" + name + "' is not supported; use sparse_categorical_crossentropy, "
              "categorical_crossentropy or mean_squared_error");
}

}  // namespace tenfold::losses
