#include "layers/initializers.h"

#include <cmath>

#include "core/error.h"

namespace tenfold {

namespace {

struct Fans {
  double in, out;
};

Fans compute_fans(const Shape& shape) {
  if (shape.rank() < 1) return {1, 1};
  if (shape.rank() == 1) return {double(shape[0]), double(shape[0])};
  double receptive_field = 1;
  for (int64_t axis = 0; axis + 2 < shape.rank(); ++axis) receptive_field *= double(shape[axis]);
  return {double(shape[shape.rank() - 2]) * receptive_field,
          double(shape[shape.rank() - 1]) * receptive_field};
}

std::string canonical_name(const std::string& name) {
  if (name == "glorot_uniform" || name == "GlorotUniform") return "glorot_uniform";
  if (name == "he_uniform" || name == "HeUniform") return "he_uniform";
  if (name == "zeros" || name == "Zeros") return "zeros";
  if (name == "ones" || name == "Ones") return "ones";
  throw Error(ErrorCode::invalid_argument,
              "initializer '" + name +
                  "' is not supported; use glorot_uniform, he_uniform, zeros or ones");
}

}  // namespace

Initializer::Initializer(const std::string& name) : name_(canonical_name(name)) {}

void Initializer::fill(Tensor& value, Random& random) const {
  std::span<float> values = value.values<float>();
  if (name_ == "zeros" || name_ == "ones") {
    for (float& v : values) v = name_ == "ones" ? 1.0f : 0.0f;
    return;
  }
  Fans fans = compute_fans(value.shape());
  double limit = name_ == "glorot_uniform" ? std::sqrt(6.0 / (fans.in + fans.out))
                                           : std::sqrt(6.0 / fans.in);
  for (float& v : values) v = random.uniform(float(-limit), float(limit));
}

nlohmann::json Initializer::get_config() const {
  static const std::map<std::string, std::string> class_names = {
      {"glorot_uniform", "GlorotUniform"}, {"he_uniform", "HeUniform"},
      {"zeros", "Zeros"}, {"ones", "Ones"}};
  nlohmann::json config = nlohmann::json::object();
  if (name_ == "glorot_uniform" || name_ == "he_uniform") config["seed"] = nullptr;
  return {{"module", "keras.initializers"}, {"class_name", class_names.at(name_)},
          {"config", config}, {"registered_name", nullptr}};
}

}  // namespace tenfold
