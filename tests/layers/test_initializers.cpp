// Keras' built-in initializers: the spread Keras documents for each (variance scaling's
// sqrt(scale / fan), a normal truncated at two standard deviations), measured on a large
// draw; Keras' arguments from configs; unknown arguments refused by name.
#include <gtest/gtest.h>

#include <cmath>

#include "core/random.h"
#include "layers/initializers.h"
#include "layers/registry.h"
#include "support/check.h"

namespace tenfold {
namespace {

struct Spread {
  const char* name;
  double stddev;  // of the values drawn, for a kernel [3, 3, 40, 60]: fan_in 360, fan_out 540
  double bound;   // no value beyond it
};

class Initializers : public ::testing::TestWithParam<Spread> {};

/// The standard deviation and the largest magnitude of `initializer`'s draw for a kernel
/// [3, 3, 40, 60] (fan_in 360, fan_out 540); `mean`, when given, receives the draw's mean.
std::pair<double, double> spread(const Initializer& initializer, uint64_t seed = 8, double* mean_out = nullptr) {
  Tensor kernel(Shape{3, 3, 40, 60});
  Random random(seed);
  initializer.fill(kernel, random);
  double sum = 0, squares = 0, largest = 0;
  for (float v : kernel.values<float>()) {
    sum += v;
    squares += double(v) * v;
    largest = std::max(largest, double(std::abs(v)));
  }
  const double n = double(kernel.num_elements()), mean = sum / n;
  if (mean_out) *mean_out = mean;
  return {std::sqrt(squares / n - mean * mean), largest};
}

TEST_P(Initializers, DrawWithKerasSpread) {
  const Spread& expected = GetParam();
  double mean = 0;
  auto [stddev, largest] = spread(Initializer(expected.name), 7, &mean);
  EXPECT_NEAR(mean, 0, 0.02 * expected.stddev) << expected.name;
  EXPECT_NEAR(stddev, expected.stddev, 0.02 * expected.stddev) << expected.name;
  EXPECT_LE(largest, expected.bound) << expected.name;
}

// Uniform on [-l, l] has stddev l / sqrt(3); variance scaling's truncated normal has stddev
// sqrt(scale / fan) and stops at 2 / 0.8796 of it.
const double in = 360, out = 540, average = 450, truncation = 2 / 0.87962566103423978;
INSTANTIATE_TEST_SUITE_P(
    Keras, Initializers,
    ::testing::Values(Spread{"glorot_uniform", std::sqrt(1 / average), std::sqrt(3 / average)},
                      Spread{"glorot_normal", std::sqrt(1 / average), truncation * std::sqrt(1 / average)},
                      Spread{"he_uniform", std::sqrt(2 / in), std::sqrt(6 / in)},
                      Spread{"he_normal", std::sqrt(2 / in), truncation * std::sqrt(2 / in)},
                      Spread{"lecun_uniform", std::sqrt(1 / in), std::sqrt(3 / in)},
                      Spread{"LecunNormal", std::sqrt(1 / in), truncation * std::sqrt(1 / in)},
                      Spread{"variance_scaling", std::sqrt(1 / in), truncation * std::sqrt(1 / in)},
                      Spread{"random_uniform", 0.05 / std::sqrt(3), 0.05},
                      Spread{"RandomNormal", 0.05, 0.05 * 6},
                      // a standard normal truncated at 2 has stddev 0.8796
                      Spread{"truncated_normal", 0.05 * 0.87962566103423978, 0.1}));

TEST(Initializers, KerasArgumentsFromConfigs) {
  auto from = [](const char* class_name, const nlohmann::json& config) {
    return Initializer::from_config({{"class_name", class_name}, {"config", config}});
  };
  // EfficientNet's convolutions: VarianceScaling(2.0, fan_out, truncated_normal).
  auto [stddev, largest] = spread(from("VarianceScaling", {{"scale", 2.0}, {"mode", "fan_out"},
                                                           {"distribution", "truncated_normal"}, {"seed", nullptr}}));
  EXPECT_NEAR(stddev, std::sqrt(2 / out), 0.02 * std::sqrt(2 / out));
  EXPECT_LE(largest, truncation * std::sqrt(2 / out));
  // Its Dense: VarianceScaling(1/3, fan_out, uniform).
  std::tie(stddev, largest) = spread(from("VarianceScaling", {{"scale", 1.0 / 3}, {"mode", "fan_out"},
                                                              {"distribution", "uniform"}}));
  EXPECT_NEAR(stddev, std::sqrt(1 / (3 * out)), 0.02 * std::sqrt(1 / (3 * out)));
  EXPECT_LE(largest, std::sqrt(1 / out));
  std::tie(stddev, largest) = spread(from("VarianceScaling", {{"distribution", "untruncated_normal"}}));
  EXPECT_NEAR(stddev, std::sqrt(1 / in), 0.02 * std::sqrt(1 / in));
  EXPECT_GT(largest, truncation * std::sqrt(1 / in));  // not truncated: 129600 draws reach past 2.27 sigma
  std::tie(stddev, largest) = spread(from("RandomNormal", {{"mean", 0.0}, {"stddev", 0.02}}));
  EXPECT_NEAR(stddev, 0.02, 0.02 * 0.02);
  std::tie(stddev, largest) = spread(from("RandomUniform", {{"minval", -0.3}, {"maxval", 0.3}}));
  EXPECT_NEAR(stddev, 0.3 / std::sqrt(3), 0.02 * 0.3 / std::sqrt(3));
  EXPECT_LE(largest, 0.3);
  std::tie(stddev, largest) = spread(from("Constant", {{"value", 0.25}}));
  EXPECT_EQ(stddev, 0);
  EXPECT_EQ(largest, 0.25);
  // A config written back gives the same initializer.
  Initializer configured = from("TruncatedNormal", {{"mean", 0.5}, {"stddev", 0.1}});
  EXPECT_EQ(Initializer::from_config(configured.get_config()).get_config(), configured.get_config());
  EXPECT_EQ(configured.get_config()["config"]["stddev"], 0.1);
}

TEST(Initializers, OrthogonalAndIdentity) {
  for (Shape shape : {Shape{6, 4}, Shape{4, 6}, Shape{2, 3, 4}}) {
    Tensor weight(shape);
    Random random(3);
    Initializer::from_config({{"class_name", "Orthogonal"}, {"config", {{"gain", 2.0}}}}).fill(weight, random);
    // Rows x columns (all axes but the last x the last): orthogonal columns of norm 2 when
    // rows >= columns, orthogonal rows of norm 2 otherwise.
    const int64_t columns = shape[shape.rank() - 1], rows = weight.num_elements() / columns;
    const bool by_columns = rows >= columns;
    const int64_t vectors = by_columns ? columns : rows, length = by_columns ? rows : columns;
    auto at = [&](int64_t vector, int64_t e) {
      return double(by_columns ? weight.data<float>()[e * columns + vector] : weight.data<float>()[vector * columns + e]);
    };
    for (int64_t a = 0; a < vectors; ++a) {
      for (int64_t b = 0; b < vectors; ++b) {
        double dot = 0;
        for (int64_t e = 0; e < length; ++e) dot += at(a, e) * at(b, e);
        EXPECT_NEAR(dot, a == b ? 4.0 : 0.0, 1e-5) << shape.to_string() << " " << a << "," << b;
      }
    }
  }
  Tensor weight(Shape{3, 4});
  Random random(3);
  Initializer("identity").fill(weight, random);
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(weight.data<float>()[r * 4 + c], r == c ? 1.0f : 0.0f);
  }
}

TEST(Initializers, UnknownArgumentsAndInitializersAreRefusedByName) {
  auto dense = [](const nlohmann::json& initializer) {
    return testing::error_of([&] {
      layers::from_config({{"class_name", "Dense"},
                           {"config", {{"name", "d"}, {"units", 2}, {"kernel_initializer", initializer}}}});
    });
  };
  EXPECT_EQ(dense({{"class_name", "HeNormal"}, {"config", {{"seed", 3}}}}), "(no error)");
  EXPECT_NE(dense({{"class_name", "RandomNormal"}, {"config", {{"spread", 0.02}}}})
                .find("Dense 'd': kernel_initializer spread 0.02 is not an argument of RandomNormal"),
            std::string::npos);
  EXPECT_NE(dense({{"class_name", "GlorotUniform"}, {"config", {{"input_axes", {0}}}}})
                .find("input_axes [0] is not supported"),
            std::string::npos);
  EXPECT_NE(dense({{"class_name", "VarianceScaling"}, {"config", {{"mode", "fan_sum"}}}}).find("mode \"fan_sum\""),
            std::string::npos);
  EXPECT_NE(dense("sparse_uniform").find("initializer 'sparse_uniform' is not supported; use one of glorot_uniform"),
            std::string::npos);
}

}  // namespace
}  // namespace tenfold
