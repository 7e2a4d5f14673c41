// Keras' built-in initializers: the spread Keras documents for each (variance scaling's
// sqrt(scale / fan), a normal truncated at two standard deviations), measured on a large
// draw; Keras' arguments other than its defaults refused by name.
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

TEST_P(Initializers, DrawWithKerasSpread) {
  const Spread& expected = GetParam();
  Tensor kernel(Shape{3, 3, 40, 60});
  Random random(7);
  Initializer(expected.name).fill(kernel, random);
  double sum = 0, squares = 0, largest = 0;
  for (float v : kernel.values<float>()) {
    sum += v;
    squares += double(v) * v;
    largest = std::max(largest, double(std::abs(v)));
  }
  const double n = double(kernel.num_elements()), mean = sum / n;
  EXPECT_NEAR(mean, 0, 0.02 * expected.stddev) << expected.name;
  EXPECT_NEAR(std::sqrt(squares / n - mean * mean), expected.stddev, 0.02 * expected.stddev) << expected.name;
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

TEST(Initializers, ArgumentsOtherThanKerasDefaultsAreRefusedByName) {
  auto dense = [](const nlohmann::json& initializer) {
    return testing::error_of([&] {
      layers::from_config({{"class_name", "Dense"},
                           {"config", {{"name", "d"}, {"units", 2}, {"kernel_initializer", initializer}}}});
    });
  };
  EXPECT_EQ(dense({{"class_name", "HeNormal"}, {"config", {{"seed", 3}}}}), "(no error)");
  EXPECT_EQ(dense({{"class_name", "RandomNormal"}, {"config", {{"mean", 0.0}, {"stddev", 0.05}, {"seed", nullptr}}}}),
            "(no error)");
  EXPECT_NE(dense({{"class_name", "RandomNormal"}, {"config", {{"stddev", 0.02}}}})
                .find("kernel_initializer stddev 0.02 is not supported: Tenfold's RandomNormal has stddev 0.05"),
            std::string::npos);
  EXPECT_NE(dense({{"class_name", "VarianceScaling"}, {"config", {{"mode", "fan_out"}}}}).find("mode \"fan_out\""),
            std::string::npos);
  EXPECT_NE(dense("orthogonal").find("initializer 'orthogonal' is not supported; use one of glorot_uniform"),
            std::string::npos);
}

}  // namespace
}  // namespace tenfold
