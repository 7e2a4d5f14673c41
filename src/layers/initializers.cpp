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

/// A Keras initializer: its snake_case name, class name, and Keras' default arguments.
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
      {"orthogonal", "Orthogonal", {{"gain", 1.0}}},
      {"identity", "Identity", {{"gain", 1.0}}},
      {"zeros", "Zeros", json::object()},
      {"ones", "Ones", json::object()},
      {"constant", "Constant", {{"value", 0.0}}},
  };
  return all;
}

const Builtin& builtin(const std::string& name) {
  std::string known;
  for (const Builtin& b : builtins()) {
    // Keras 2 names a few differently: IdentityInitializer, OrthogonalInitializer.
    if (name == b.name || name == b.class_name || name == std::string(b.class_name) + "Initializer") return b;
    known += std::string(known.empty() ? "" : ", ") + b.name;
  }
  throw Error(ErrorCode::invalid_argument,
              "initializer '" + name + "' is not supported; use one of " + known);
}

/// (scale, mode, distribution) of the named members of the variance-scaling family.
std::optional<nlohmann::json> variance_scaling(const std::string& name) {
  auto family = [](double scale, const char* mode, const char* distribution) {
    return nlohmann::json{{"scale", scale}, {"mode", mode}, {"distribution", distribution}};
  };
  if (name == "glorot_uniform") return family(1, "fan_avg", "uniform");
  if (name == "glorot_normal") return family(1, "fan_avg", "truncated_normal");
  if (name == "he_uniform") return family(2, "fan_in", "uniform");
  if (name == "he_normal") return family(2, "fan_in", "truncated_normal");
  if (name == "lecun_uniform") return family(1, "fan_in", "uniform");
  if (name == "lecun_normal") return family(1, "fan_in", "truncated_normal");
  return std::nullopt;
}

/// A standard normal (Box-Muller on the seeded generator), redrawn beyond 2 when truncated.
double normal(Random& random, bool truncated) {
  while (true) {
    const double u = 1.0 - double(random.uniform()), v = double(random.uniform());
    const double z = std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
    if (!truncated || std::abs(z) <= 2.0) return z;
  }
}

}  // namespace

Initializer::Initializer(const std::string& name) : name_(builtin(name).name), arguments_(builtin(name).config) {}

Initializer Initializer::from_config(const nlohmann::json& config) {
  check_argument(config.is_object() && config.contains("class_name") && config.at("class_name").is_string(),
                 "an initializer must be a name or {\"class_name\": ...}, got " + config.dump().substr(0, 200));
  Initializer initializer(config.at("class_name").get<std::string>());
  const Builtin& b = builtin(initializer.name_);
  const nlohmann::json arguments = config.value("config", nlohmann::json::object());
  for (const auto& [key, value] : arguments.items()) {
    if (key == "seed") continue;  // Tenfold draws from its own seeded generator
    check_argument(b.config.contains(key), key + " " + value.dump() + " is not an argument of " + b.class_name);
    // input_axes / output_axes other than null (the last two axes) are not implemented.
    check_argument(!b.config.at(key).is_null() || value.is_null(),
                   key + " " + value.dump() + " is not supported: Tenfold's " + b.class_name +
                       " computes fans over the last two axes (null)");
    check_argument(value.is_null() || value.type() == b.config.at(key).type() ||
                       (value.is_number() && b.config.at(key).is_number()),
                   key + " " + value.dump() + " has the wrong type for " + b.class_name);
    initializer.arguments_[key] = value;
  }
  if (initializer.name_ == "variance_scaling") {
    const std::string mode = initializer.arguments_.at("mode"), distribution = initializer.arguments_.at("distribution");
    check_argument(mode == "fan_in" || mode == "fan_out" || mode == "fan_avg",
                   "mode \"" + mode + "\" is not one of VarianceScaling's fan_in, fan_out, fan_avg");
    check_argument(distribution == "truncated_normal" || distribution == "untruncated_normal" ||
                       distribution == "normal" || distribution == "uniform",
                   "distribution \"" + distribution + "\" is not one of VarianceScaling's truncated_normal, "
                   "untruncated_normal, uniform");
  }
  return initializer;
}

Initializer Initializer::constant(double value) {
  Initializer initializer("constant");
  initializer.arguments_["value"] = value;
  return initializer;
}

void Initializer::fill(Tensor& value, Random& random) const {
  std::span<float> values = value.values<float>();
  if (name_ == "zeros" || name_ == "ones" || name_ == "constant") {
    const float constant = name_ == "ones" ? 1.0f : name_ == "zeros" ? 0.0f : float(argument("value"));
    for (float& v : values) v = constant;
    return;
  }
  if (name_ == "random_uniform") {
    for (float& v : values) v = random.uniform(float(argument("minval")), float(argument("maxval")));
    return;
  }
  if (name_ == "random_normal" || name_ == "truncated_normal") {
    const double mean = argument("mean"), stddev = argument("stddev");
    for (float& v : values) v = float(mean + stddev * normal(random, name_ == "truncated_normal"));
    return;
  }
  if (name_ == "identity") {
    check_argument(value.shape().rank() == 2, "the Identity initializer makes 2-D weights, not " +
                                                  value.shape().to_string());
    for (float& v : values) v = 0.0f;
    for (int64_t i = 0; i < std::min(value.shape()[0], value.shape()[1]); ++i) {
      values[size_t(i * value.shape()[1] + i)] = float(argument("gain"));
    }
    return;
  }
  if (name_ == "orthogonal") {
    fill_orthogonal(value, random);
    return;
  }
  const nlohmann::json& vs = variance_scaling(name_) ? *variance_scaling(name_) : arguments_;
  const double scale = vs.at("scale").get<double>();
  const std::string mode = vs.at("mode"), distribution = vs.at("distribution");
  const Fans fans = compute_fans(value.shape());
  const double fan = mode == "fan_in" ? fans.in : mode == "fan_out" ? fans.out : (fans.in + fans.out) / 2;
  const double variance = scale / std::max(1.0, fan);
  if (distribution == "uniform") {
    const double limit = std::sqrt(3.0 * variance);
    for (float& v : values) v = random.uniform(float(-limit), float(limit));
    return;
  }
  if (distribution == "untruncated_normal") {
    for (float& v : values) v = float(std::sqrt(variance) * normal(random, false));
    return;
  }
  // Keras: the stddev of a normal truncated at 2 sigma is 0.8796 of the untruncated one.
  const double stddev = std::sqrt(variance) / 0.87962566103423978;
  for (float& v : values) v = float(stddev * normal(random, true));
}

void Initializer::fill_orthogonal(Tensor& value, Random& random) const {
  // Keras: a normal matrix of (rows = all axes but the last, columns = the last), made
  // orthonormal by QR with the signs of R's diagonal taken out (which Gram-Schmidt's positive
  // diagonal already does); transposed when there are fewer rows than columns.
  check_argument(value.shape().rank() >= 2, "the Orthogonal initializer needs weights of rank 2 or more, not " +
                                                value.shape().to_string());
  const int64_t columns = value.shape()[value.shape().rank() - 1], rows = value.num_elements() / columns;
  const int64_t n = std::max(rows, columns), k = std::min(rows, columns);
  std::vector<double> q(size_t(n * k));  // k orthonormal vectors of length n
  for (double& v : q) v = normal(random, false);
  for (int64_t j = 0; j < k; ++j) {
    double* vector = q.data() + j * n;
    for (int64_t i = 0; i < j; ++i) {
      const double* previous = q.data() + i * n;
      double dot = 0;
      for (int64_t e = 0; e < n; ++e) dot += vector[e] * previous[e];
      for (int64_t e = 0; e < n; ++e) vector[e] -= dot * previous[e];
    }
    double norm = 0;
    for (int64_t e = 0; e < n; ++e) norm += vector[e] * vector[e];
    norm = std::sqrt(norm);
    for (int64_t e = 0; e < n; ++e) vector[e] /= norm;
  }
  // Vector j is column j of the rows x columns matrix, or row j when there are fewer rows.
  float* out = value.data<float>();
  const double gain = argument("gain");
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < columns; ++c) {
      const double v = rows >= columns ? q[size_t(c * n + r)] : q[size_t(r * n + c)];
      out[r * columns + c] = float(gain * v);
    }
  }
}

nlohmann::json Initializer::get_config() const {
  const Builtin& b = builtin(name_);
  nlohmann::json config = arguments_;
  if (name_ != "zeros" && name_ != "ones" && name_ != "constant") config["seed"] = nullptr;
  return {{"module", "keras.initializers"}, {"class_name", b.class_name},
          {"config", config}, {"registered_name", nullptr}};
}

}  // namespace tenfold
