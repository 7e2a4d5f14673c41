#include "layers/initializers.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

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

/// A Keras initializer: its snake_case name, class name, and the arguments Tenfold draws with
/// (Keras' defaults). The variance-scaling family draws with scale / fan (mode), from a
/// uniform or a normal truncated at two standard deviations (distribution).
struct Builtin {
  const char* name;
  const char* class_name;
  nlohmann::json config;  // Keras' defaults, without the seed
};

const std::vector<Builtin>& builtins() {
  using nlohmann::json;
  // Keras 3.15 writes the axes the fans are computed over (null: the last two, as Tenfold).
  const json axes = {{"input_axes", nullptr}, {"output_axes", nullptr}};
  static const std::vector<Builtin> all = {
      {"glorot_uniform", "GlorotUniform", axes},
      {"glorot_normal", "GlorotNormal", axes},
      {"he_uniform", "HeUniform", axes},
      {"he_normal", "HeNormal", axes},
      {"lecun_uniform", "LecunUniform", axes},
      {"lecun_normal", "LecunNormal", axes},
      {"variance_scaling", "VarianceScaling",
       {{"scale", 1.0}, {"mode", "fan_in"}, {"distribution", "truncated_normal"}, {"input_axes", nullptr},
        {"output_axes", nullptr}}},
      {"random_normal", "RandomNormal", {{"mean", 0.0}, {"stddev", 0.05}}},
      {"random_uniform", "RandomUniform", {{"minval", -0.05}, {"maxval", 0.05}}},
      {"truncated_normal", "TruncatedNormal", {{"mean", 0.0}, {"stddev", 0.05}}},
      {"zeros", "Zeros", json::object()},
      {"ones", "Ones", json::object()},
      {"constant", "Constant", {{"value", 0.0}}},
  };
  return all;
}

const Builtin& builtin(const std::string& name) {
  std::string known;
  for (const Builtin& b : builtins()) {
    if (name == b.name || name == b.class_name) return b;
    known += std::string(known.empty() ? "" : ", ") + b.name;
  }
  throw Error(ErrorCode::invalid_argument,
              "initializer '" + name + "' is not supported; use one of " + known);
}

/// (scale, mode, distribution) of the variance-scaling initializers.
struct VarianceScaling {
  double scale;
  const char* mode;
  const char* distribution;
};

std::optional<VarianceScaling> variance_scaling(const std::string& name) {
  if (name == "glorot_uniform") return VarianceScaling{1, "fan_avg", "uniform"};
  if (name == "glorot_normal") return VarianceScaling{1, "fan_avg", "truncated_normal"};
  if (name == "he_uniform") return VarianceScaling{2, "fan_in", "uniform"};
  if (name == "he_normal") return VarianceScaling{2, "fan_in", "truncated_normal"};
  if (name == "lecun_uniform") return VarianceScaling{1, "fan_in", "uniform"};
  if (name == "lecun_normal") return VarianceScaling{1, "fan_in", "truncated_normal"};
  if (name == "variance_scaling") return VarianceScaling{1, "fan_in", "truncated_normal"};
  return std::nullopt;
}

/// A standard normal (Box-Muller on the seeded generator), redrawn beyond 2 when truncated.
float normal(Random& random, bool truncated) {
  while (true) {
    const double u = 1.0 - double(random.uniform()), v = double(random.uniform());
    const double z = std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
    if (!truncated || std::abs(z) <= 2.0) return float(z);
  }
}

}  // namespace

std::string Initializer::unsupported_setting(const std::string& name, const nlohmann::json& config) {
  const Builtin& b = builtin(name);
  for (const auto& [key, value] : config.items()) {
    if (key == "seed") continue;  // Tenfold draws from its own seeded generator
    if (!b.config.contains(key)) return key + " " + value.dump() + " is not an argument of " + b.class_name;
    if (value != b.config.at(key)) {
      return key + " " + value.dump() + " is not supported: Tenfold's " + b.class_name + " has " + key + " " +
             b.config.at(key).dump() + " (Keras' default)";
    }
  }
  return "";
}

Initializer::Initializer(const std::string& name) : name_(builtin(name).name) {}

void Initializer::fill(Tensor& value, Random& random) const {
  std::span<float> values = value.values<float>();
  if (name_ == "zeros" || name_ == "ones" || name_ == "constant") {
    for (float& v : values) v = name_ == "ones" ? 1.0f : 0.0f;
    return;
  }
  if (name_ == "random_uniform") {
    for (float& v : values) v = random.uniform(-0.05f, 0.05f);
    return;
  }
  if (name_ == "random_normal" || name_ == "truncated_normal") {
    for (float& v : values) v = 0.05f * normal(random, name_ == "truncated_normal");
    return;
  }
  const VarianceScaling vs = *variance_scaling(name_);
  const Fans fans = compute_fans(value.shape());
  const double fan = std::string(vs.mode) == "fan_in"    ? fans.in
                     : std::string(vs.mode) == "fan_out" ? fans.out
                                                         : (fans.in + fans.out) / 2;
  if (std::string(vs.distribution) == "uniform") {
    const double limit = std::sqrt(3.0 * vs.scale / fan);
    for (float& v : values) v = random.uniform(float(-limit), float(limit));
    return;
  }
  // Keras: the stddev of a normal truncated at 2 sigma is 0.8796 of the untruncated one.
  const double stddev = std::sqrt(vs.scale / fan) / 0.87962566103423978;
  for (float& v : values) v = float(stddev) * normal(random, true);
}

nlohmann::json Initializer::get_config() const {
  const Builtin& b = builtin(name_);
  nlohmann::json config = b.config;
  if (name_ != "zeros" && name_ != "ones" && name_ != "constant") config["seed"] = nullptr;
  return {{"module", "keras.initializers"}, {"class_name", b.class_name},
          {"config", config}, {"registered_name", nullptr}};
}

}  // namespace tenfold
