#include "losses/loss.h"

#include "core/error.h"
#include <algorithm>
#include <functional>
#include <vector>

#include "layers/strict_config.h"
#include "losses/crossentropy.h"
#include "losses/elementwise.h"
#include "losses/row_losses.h"

namespace tenfold::losses {

nlohmann::json Loss::get_config() const {
  return {{"name", name()}, {"reduction", "sum_over_batch_size"}};
}

void Loss::validate_targets(const Tensor&, const Shape&) const {}

namespace {

/// Keras' names of a loss: its function name, class name and aliases.
struct Known {
  std::vector<std::string> names;
  std::function<std::shared_ptr<Loss>()> make;
};

const std::vector<Known>& known_losses() {
  static const std::vector<Known> known = {
      {{"sparse_categorical_crossentropy", "SparseCategoricalCrossentropy"}, [] { return std::make_shared<SparseCategoricalCrossentropy>(); }},
      {{"categorical_crossentropy", "CategoricalCrossentropy"}, [] { return std::make_shared<CategoricalCrossentropy>(); }},
      {{"binary_crossentropy", "BinaryCrossentropy"}, [] { return std::make_shared<BinaryCrossentropy>(); }},
      {{"binary_focal_crossentropy", "BinaryFocalCrossentropy"}, [] { return std::make_shared<BinaryFocalCrossentropy>(); }},
      {{"mean_squared_error", "mse", "MeanSquaredError"}, [] { return std::make_shared<MeanSquaredError>(); }},
      {{"mean_absolute_error", "mae", "MeanAbsoluteError"}, [] { return std::make_shared<MeanAbsoluteError>(); }},
      {{"mean_absolute_percentage_error", "mape", "MeanAbsolutePercentageError"}, [] { return std::make_shared<MeanAbsolutePercentageError>(); }},
      {{"mean_squared_logarithmic_error", "msle", "MeanSquaredLogarithmicError"}, [] { return std::make_shared<MeanSquaredLogarithmicError>(); }},
      {{"huber", "huber_loss", "Huber"}, [] { return std::make_shared<Huber>(); }},
      {{"log_cosh", "logcosh", "LogCosh"}, [] { return std::make_shared<LogCosh>(); }},
      {{"kl_divergence", "kld", "kullback_leibler_divergence", "KLDivergence"}, [] { return std::make_shared<KLDivergence>(); }},
      {{"poisson", "Poisson"}, [] { return std::make_shared<Poisson>(); }},
      {{"hinge", "Hinge"}, [] { return std::make_shared<Hinge>(); }},
      {{"squared_hinge", "SquaredHinge"}, [] { return std::make_shared<SquaredHinge>(); }},
      {{"categorical_hinge", "CategoricalHinge"}, [] { return std::make_shared<CategoricalHinge>(); }},
      {{"cosine_similarity", "CosineSimilarity"}, [] { return std::make_shared<CosineSimilarity>(); }},
  };
  return known;
}

}  // namespace

std::shared_ptr<Loss> get(const std::string& name) {
  std::string names;
  for (const Known& known : known_losses()) {
    if (std::find(known.names.begin(), known.names.end(), name) != known.names.end()) return known.make();
    names += (names.empty() ? "" : ", ") + known.names[0];
  }
  throw Error(ErrorCode::invalid_argument, "loss '" + name + "' is not supported; use one of " + names);
}

std::shared_ptr<Loss> from_config(const nlohmann::json& loss) {
  check_argument(loss.is_object() && loss.contains("class_name"),
                 "a loss config needs 'class_name', got " + loss.dump().substr(0, 200));
  const std::string class_name = loss.at("class_name").get<std::string>();
  const nlohmann::json config = loss.value("config", nlohmann::json::object());
  get(class_name);  // an unknown loss is named before its arguments
  layers::StrictConfig strict(class_name, config);
  strict.allow_only("reduction", {"sum_over_batch_size"},
                    "Tenfold's losses average over the batch (sum_over_batch_size)");
  strict.allow_only("axis", {-1}, "the loss runs over the last axis");
  strict.allow_null("ignore_class");
  const bool from_logits = strict.take("from_logits", false);
  const double label_smoothing = strict.take("label_smoothing", 0.0);
  std::shared_ptr<Loss> result;
  if (class_name == "SparseCategoricalCrossentropy" || class_name == "sparse_categorical_crossentropy") {
    result = std::make_shared<SparseCategoricalCrossentropy>(from_logits);
  } else if (class_name == "CategoricalCrossentropy" || class_name == "categorical_crossentropy") {
    result = std::make_shared<CategoricalCrossentropy>(from_logits, label_smoothing);
  } else if (class_name == "BinaryCrossentropy" || class_name == "binary_crossentropy") {
    result = std::make_shared<BinaryCrossentropy>(from_logits, label_smoothing);
  } else if (class_name == "BinaryFocalCrossentropy" || class_name == "binary_focal_crossentropy") {
    result = std::make_shared<BinaryFocalCrossentropy>(strict.take("apply_class_balancing", false),
                                                       strict.take("alpha", 0.25), strict.take("gamma", 2.0),
                                                       from_logits, label_smoothing);
  } else if (class_name == "Huber" || class_name == "huber") {
    result = std::make_shared<Huber>(strict.take("delta", 1.0));
  } else {
    check_argument(!from_logits && label_smoothing == 0,
                   class_name + " takes neither from_logits nor label_smoothing");
    result = get(class_name);
  }
  strict.finish();
  return result;
}

}  // namespace tenfold::losses
