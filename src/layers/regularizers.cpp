#include "layers/regularizers.h"

#include <cmath>

#include "core/config_reader.h"
#include "core/error.h"
#include "layers/variable.h"

namespace tenfold {

using nlohmann::json;

std::optional<Regularizer> Regularizer::from_config(const json& value) {
  if (value.is_null()) return std::nullopt;
  if (value.is_string()) {
    // Keras' names: l1 and l2 are L1(0.01) and L2(0.01); l1l2 is L1L2() with zero factors.
    const std::string name = value.get<std::string>();
    if (name == "l1") return Regularizer{.l1 = 0.01};
    if (name == "l2") return Regularizer{.l2 = 0.01};
    if (name == "l1l2") return Regularizer{};
    if (name == "L1" || name == "L2" || name == "L1L2") return from_config({{"class_name", name}});
    throw Error(ErrorCode::invalid_argument, "regularizer '" + name + "' is not supported; use l1, l2 or l1l2");
  }
  check_argument(value.is_object() && value.contains("class_name"),
                 "a regularizer must be a name or a serialized Keras regularizer, got " + value.dump().substr(0, 200));
  const std::string class_name = value.at("class_name").get<std::string>();
  ConfigReader::require_keras_module(value, "keras.regularizers", "regularizer");
  const json config = value.value("config", json::object());
  ConfigReader reader(class_name, config);
  Regularizer result;
  if (class_name == "L1") {
    result.l1 = reader.take("l1", 0.01);
  } else if (class_name == "L2") {
    result.l2 = reader.take("l2", 0.01);
  } else if (class_name == "L1L2") {
    result.l1 = reader.take("l1", 0.0);
    result.l2 = reader.take("l2", 0.0);
  } else {
    throw Error(ErrorCode::invalid_argument,
                "regularizer '" + class_name + "' is not supported; use L1, L2 or L1L2");
  }
  reader.finish();
  check_argument(result.l1 >= 0 && result.l2 >= 0, "regularizer '" + class_name + "': l1 and l2 must not be negative");
  return result;
}

json Regularizer::get_config() const {
  json config;
  std::string class_name = "L1L2";
  if (l1 != 0 && l2 == 0) {
    class_name = "L1";
    config = {{"l1", l1}};
  } else if (l2 != 0 && l1 == 0) {
    class_name = "L2";
    config = {{"l2", l2}};
  } else {
    config = {{"l1", l1}, {"l2", l2}};
  }
  return {{"module", "keras.regularizers"}, {"class_name", class_name}, {"config", config}, {"registered_name", nullptr}};
}

double Regularizer::penalty(const Variable& weight) const { return penalty(weight.value().values<float>()); }

double Regularizer::penalty(std::span<const float> values) const {
  double absolute = 0, squares = 0;
  for (float w : values) {
    absolute += std::abs(double(w));
    squares += double(w) * w;
  }
  return l1 * absolute + l2 * squares;
}

void Regularizer::add_gradient(const Variable& weight, Tensor& gradient) const {
  add_gradient(weight.value().values<float>(), gradient.data<float>());
}

void Regularizer::add_gradient(std::span<const float> values, float* gradient, double scale) const {
  const float f1 = float(scale * l1), f2 = float(scale * 2 * l2);
  for (size_t i = 0; i < values.size(); ++i) {
    gradient[i] += f1 * float((values[i] > 0) - (values[i] < 0)) + f2 * values[i];
  }
}

double regularization_penalty(std::span<Variable* const> weights) {
  double total = 0;
  for (const Variable* weight : weights) {
    if (weight->regularizer()) total += weight->regularizer()->penalty(*weight);
  }
  return total;
}

void add_regularization_gradients(std::span<Variable* const> weights, std::span<Tensor> gradients) {
  check_argument(weights.size() == gradients.size(), std::to_string(weights.size()) + " weights got " +
                                                         std::to_string(gradients.size()) + " gradients");
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i]->regularizer()) weights[i]->regularizer()->add_gradient(*weights[i], gradients[i]);
  }
}

}  // namespace tenfold
