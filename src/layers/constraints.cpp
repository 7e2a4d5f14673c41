#include "layers/constraints.h"

#include <algorithm>
#include <cmath>

#include "core/config_reader.h"
#include "core/error.h"
#include "layers/variable.h"
#include "core/keras_epsilon.h"

namespace tenfold {

using nlohmann::json;

namespace {

const char* class_name_of(Constraint::Kind kind) {
  switch (kind) {
    case Constraint::Kind::max_norm: return "MaxNorm";
    case Constraint::Kind::min_max_norm: return "MinMaxNorm";
    case Constraint::Kind::unit_norm: return "UnitNorm";
    case Constraint::Kind::non_neg: return "NonNeg";
  }
  return "";
}

std::vector<int64_t> take_axes(ConfigReader& reader) {
  const json axis = reader.take<json>("axis", json(0));
  if (axis.is_number_integer()) return {axis.get<int64_t>()};
  check_argument(axis.is_array() && !axis.empty(), "a constraint's axis must be an integer or a list, got " + axis.dump());
  std::vector<int64_t> axes;
  for (const json& a : axis) axes.push_back(a.get<int64_t>());
  return axes;
}

}  // namespace

std::optional<Constraint> Constraint::from_config(const json& value) {
  if (value.is_null()) return std::nullopt;
  std::string class_name;
  json config = json::object();
  if (value.is_string()) {
    const std::string name = value.get<std::string>();
    class_name = name == "max_norm" ? "MaxNorm" : name == "min_max_norm" ? "MinMaxNorm"
               : name == "unit_norm" ? "UnitNorm" : name == "non_neg" ? "NonNeg" : name;  // or a class name
  } else {
    check_argument(value.is_object() && value.contains("class_name"),
                   "a constraint must be a name or a serialized Keras constraint, got " + value.dump().substr(0, 200));
    class_name = value.at("class_name").get<std::string>();
    ConfigReader::require_keras_module(value, "keras.constraints", "constraint");
    config = value.value("config", json::object());
  }
  ConfigReader reader(class_name, config);
  Constraint result;
  if (class_name == "MaxNorm") {
    result.kind = Kind::max_norm;
    result.max_value = reader.take("max_value", 2.0);
    result.axes = take_axes(reader);
  } else if (class_name == "MinMaxNorm") {
    result.kind = Kind::min_max_norm;
    result.min_value = reader.take("min_value", 0.0);
    result.max_value = reader.take("max_value", 1.0);
    result.rate = reader.take("rate", 1.0);
    result.axes = take_axes(reader);
  } else if (class_name == "UnitNorm") {
    result.kind = Kind::unit_norm;
    result.axes = take_axes(reader);
  } else if (class_name == "NonNeg") {
    result.kind = Kind::non_neg;
  } else {
    throw Error(ErrorCode::invalid_argument, "constraint '" + class_name +
                                                 "' is not supported; use MaxNorm, MinMaxNorm, UnitNorm or NonNeg");
  }
  reader.finish();
  return result;
}

json Constraint::get_config() const {
  json config = json::object();
  const json axis = axes.size() == 1 ? json(axes[0]) : json(axes);
  if (kind == Kind::max_norm) config = {{"max_value", max_value}, {"axis", axis}};
  if (kind == Kind::min_max_norm) config = {{"min_value", min_value}, {"max_value", max_value}, {"rate", rate}, {"axis", axis}};
  if (kind == Kind::unit_norm) config = {{"axis", axis}};
  return {{"module", "keras.constraints"}, {"class_name", class_name_of(kind)}, {"config", config}, {"registered_name", nullptr}};
}

void Constraint::apply(Variable& weight) const {
  if (kind == Kind::non_neg) {  // elementwise: any layout
    for (float& w : weight.value().values<float>()) w = std::max(w, 0.0f);
    return;
  }
  // Norms over `axes` of Keras' layout: each element belongs to the group of elements that
  // differ from it only along those axes.
  Tensor keras = weight.read();
  const Shape& shape = keras.shape();
  const int64_t rank = shape.rank();
  std::vector<bool> reduced(size_t(rank), false);
  for (int64_t axis : axes) {
    const int64_t a = axis < 0 ? axis + rank : axis;
    check_argument(a >= 0 && a < rank, "constraint axis " + std::to_string(axis) + " is out of range for weight '" +
                                           weight.name() + "' of rank " + std::to_string(rank));
    reduced[size_t(a)] = true;
  }
  // The group of each element: its index with the reduced axes dropped.
  std::vector<int64_t> group(static_cast<size_t>(keras.num_elements()));
  int64_t groups = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[size_t(d)]) groups *= shape[d];
  }
  for (int64_t i = 0; i < keras.num_elements(); ++i) {
    int64_t rest = i, index = 0, stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t coordinate = rest % shape[d];
      rest /= shape[d];
      if (reduced[size_t(d)]) continue;
      index += coordinate * stride;
      stride *= shape[d];
    }
    group[size_t(i)] = index;
  }
  std::vector<double> squares(static_cast<size_t>(groups), 0.0);
  float* w = keras.data<float>();
  for (int64_t i = 0; i < keras.num_elements(); ++i) squares[size_t(group[size_t(i)])] += double(w[i]) * w[i];
  std::vector<float> scale(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) {
    const double norm = std::sqrt(squares[size_t(g)]);
    double desired = 1.0;
    if (kind == Kind::max_norm) desired = std::clamp(norm, 0.0, max_value);
    if (kind == Kind::min_max_norm) desired = rate * std::clamp(norm, min_value, max_value) + (1 - rate) * norm;
    scale[size_t(g)] = float(desired / (keras_epsilon + norm));
  }
  for (int64_t i = 0; i < keras.num_elements(); ++i) w[i] *= scale[size_t(group[size_t(i)])];
  weight.assign(keras);
}

}  // namespace tenfold
