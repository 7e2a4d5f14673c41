#pragma once
// Comparisons and gradient checks shared by the tests.
#include <gtest/gtest.h>

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tenfold::testing {

/// numpy.allclose semantics, |a - b| <= atol + rtol * |b|, elementwise with the first
/// mismatch named.
::testing::AssertionResult all_close(std::span<const float> actual, std::span<const double> expected,
                                     double rtol, double atol);
::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected, double rtol,
                                     double atol);

/// Central differences of a scalar function of `point`, in double precision.
std::vector<double> numerical_gradient(const std::function<double(const std::vector<double>&)>& f,
                                       std::vector<double> point, double step = 1e-6);

/// Random values uniform in [low, high), reproducible by seed.
std::vector<double> random_values(size_t count, uint64_t seed, double low = -1, double high = 1);
std::vector<float> to_floats(const std::vector<double>& values);
/// A float32 tensor of random_values.
Tensor random_tensor(const Shape& shape, uint64_t seed, double low = -1, double high = 1);
/// int32 class labels uniform in [0, classes).
Tensor random_labels(int64_t count, int classes, uint64_t seed);

/// The message of the tenfold::Error `action` throws, or "(no error)".
std::string error_of(const std::function<void()>& action);

/// Directory of the committed fixtures.
std::string fixture_path(const std::string& relative);

}  // namespace tenfold::testing
