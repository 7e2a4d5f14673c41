#include "support/check.h"

#include "core/error.h"

#include <cmath>

#include "core/random.h"

namespace tenfold::testing {

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

::testing::AssertionResult all_close(std::span<const float> actual,
                                     std::span<const double> expected, double rtol, double atol) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << "sizes differ: " << actual.size() << " vs " << expected.size();
  }
  size_t mismatches = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double error = std::fabs(double(actual[i]) - expected[i]);
    double bound = atol + rtol * std::fabs(expected[i]);
    if (!(error <= bound)) {
      if (mismatches++ == 0) first = i;
      worst = std::max(worst, error);
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << mismatches << " of " << actual.size() << " elements differ; first at " << first
         << ": " << actual[first] << " vs " << expected[first] << "; worst error " << worst;
}

::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, double rtol,
                                     double atol) {
  std::vector<double> values(expected.values<float>().begin(), expected.values<float>().end());
  return all_close(actual.values<float>(), values, rtol, atol);
}

std::vector<double> numerical_gradient(const std::function<double(const std::vector<double>&)>& f,
                                       std::vector<double> point, double step) {
  std::vector<double> gradient(point.size());
  for (size_t i = 0; i < point.size(); ++i) {
    double original = point[i];
    point[i] = original + step;
    double plus = f(point);
    point[i] = original - step;
    double minus = f(point);
    point[i] = original;
    gradient[i] = (plus - minus) / (2 * step);
  }
  return gradient;
}

std::vector<double> random_values(size_t count, uint64_t seed, double low, double high) {
  Random random(seed);
  std::vector<double> values(count);
  for (double& value : values) value = low + (high - low) * double(random.next_u64() >> 11) * 0x1.0p-53;
  return values;
}

std::vector<float> to_floats(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

Tensor random_tensor(const Shape& shape, uint64_t seed, double low, double high) {
  Tensor tensor(shape);
  std::vector<double> values = random_values(size_t(shape.num_elements()), seed, low, high);
  std::copy(values.begin(), values.end(), tensor.data<float>());
  return tensor;
}

Tensor random_labels(int64_t count, int classes, uint64_t seed) {
  Tensor labels(Shape{count}, DType::int32);
  Random random(seed);
  for (int32_t& label : labels.values<int32_t>()) label = int32_t(random.below(uint64_t(classes)));
  return labels;
}

std::string fixture_path(const std::string& relative) {
  return std::string(TENFOLD_FIXTURES_DIR) + "/" + relative;
}

}  // namespace tenfold::testing
