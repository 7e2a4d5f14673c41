// The reference kernels' backward passes against central differences in double precision: each
// checks d/dparam of sum(forward(...) * upstream) for a random upstream gradient.
#include <gtest/gtest.h>

#include "core/error.h"
#include "kernels/reference/activation.h"
#include "kernels/reference/conv2d.h"
#include "kernels/reference/dense.h"
#include "kernels/reference/pooling.h"
#include "support/check.h"

namespace tenfold::kernels::reference {
namespace {

using testing::numerical_gradient;
using testing::random_values;

constexpr double tolerance = 1e-7;

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

::testing::AssertionResult close(const std::vector<double>& analytic,
                                 const std::vector<double>& numeric) {
  for (size_t i = 0; i < analytic.size(); ++i) {
    if (std::fabs(analytic[i] - numeric[i]) > tolerance * (1 + std::fabs(numeric[i]))) {
      return ::testing::AssertionFailure()
             << "element " << i << ": analytic " << analytic[i] << ", numeric " << numeric[i];
    }
  }
  return ::testing::AssertionSuccess();
}

struct ConvCase {
  int64_t batch, height, width, channels, filters, kh, kw, sh, sw;
  Padding padding;
};

class Conv2DGradient : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv2DGradient, MatchesCentralDifferences) {
  ConvCase c = GetParam();
  WindowGeometry g = make_window_geometry(c.batch, c.height, c.width, c.channels, c.filters, c.kh,
                                          c.kw, c.sh, c.sw, c.padding);
  size_t out_count = size_t(g.batch * g.out_height * g.out_width * g.out_channels);
  auto x = random_values(size_t(c.batch * c.height * c.width * c.channels), 1);
  auto kernel = random_values(size_t(c.kh * c.kw * c.channels * c.filters), 2);
  auto bias = random_values(size_t(c.filters), 3);
  auto upstream = random_values(out_count, 4);
  auto objective = [&](const std::vector<double>& xs, const std::vector<double>& ks,
                       const std::vector<double>& bs) {
    std::vector<double> y(out_count);
    conv2d_forward<double>(g, xs.data(), ks.data(), bs.data(), y.data());
    return dot(y, upstream);
  };
  std::vector<double> dx(x.size()), dkernel(kernel.size()), dbias(bias.size());
  conv2d_backward<double>(g, x.data(), kernel.data(), upstream.data(), dx.data(), dkernel.data(),
                          dbias.data());
  EXPECT_TRUE(close(dx, numerical_gradient([&](auto& p) { return objective(p, kernel, bias); }, x)));
  EXPECT_TRUE(close(dkernel, numerical_gradient([&](auto& p) { return objective(x, p, bias); }, kernel)));
  EXPECT_TRUE(close(dbias, numerical_gradient([&](auto& p) { return objective(x, kernel, p); }, bias)));
}

INSTANTIATE_TEST_SUITE_P(Geometries, Conv2DGradient,
                         ::testing::Values(ConvCase{2, 5, 6, 2, 3, 3, 3, 1, 1, Padding::valid},
                                           ConvCase{1, 6, 5, 3, 2, 3, 3, 2, 2, Padding::same},
                                           ConvCase{2, 4, 7, 1, 4, 2, 3, 1, 2, Padding::same},
                                           ConvCase{1, 5, 5, 2, 2, 5, 1, 1, 1, Padding::valid}));

struct PoolCase {
  PoolKind kind;
  int64_t height, width, pool, stride;
  Padding padding;
};

class PoolGradient : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolGradient, MatchesCentralDifferences) {
  PoolCase c = GetParam();
  WindowGeometry g = make_window_geometry(2, c.height, c.width, 3, 3, c.pool, c.pool, c.stride,
                                          c.stride, c.padding);
  size_t out_count = size_t(g.batch * g.out_height * g.out_width * g.in_channels);
  // Random values: a tie within a window, which would make max pooling non-differentiable,
  // has probability ~1e-6.
  auto x = random_values(size_t(2 * c.height * c.width * 3), 5);
  auto upstream = random_values(out_count, 6);
  auto objective = [&](const std::vector<double>& xs) {
    std::vector<double> y(out_count);
    pool_forward<double>(c.kind, g, xs.data(), y.data());
    return dot(y, upstream);
  };
  std::vector<double> dx(x.size());
  pool_backward<double>(c.kind, g, x.data(), upstream.data(), dx.data());
  EXPECT_TRUE(close(dx, numerical_gradient(objective, x)));
}

INSTANTIATE_TEST_SUITE_P(Windows, PoolGradient,
                         ::testing::Values(PoolCase{PoolKind::max, 6, 6, 2, 2, Padding::valid},
                                           PoolCase{PoolKind::max, 7, 5, 3, 2, Padding::same},
                                           PoolCase{PoolKind::average, 6, 7, 2, 2, Padding::valid},
                                           PoolCase{PoolKind::average, 5, 7, 2, 2, Padding::same},
                                           PoolCase{PoolKind::average, 5, 5, 3, 1, Padding::same}));

TEST(DenseGradient, MatchesCentralDifferences) {
  const int64_t rows = 3, in = 5, units = 4;
  auto x = random_values(size_t(rows * in), 7);
  auto kernel = random_values(size_t(in * units), 8);
  auto bias = random_values(size_t(units), 9);
  auto upstream = random_values(size_t(rows * units), 10);
  auto objective = [&](const std::vector<double>& xs, const std::vector<double>& ks,
                       const std::vector<double>& bs) {
    std::vector<double> y(size_t(rows * units));
    dense_forward<double>(rows, in, units, xs.data(), ks.data(), bs.data(), y.data());
    return dot(y, upstream);
  };
  std::vector<double> dx(x.size()), dkernel(kernel.size()), dbias(bias.size());
  dense_backward<double>(rows, in, units, x.data(), kernel.data(), upstream.data(), dx.data(),
                         dkernel.data(), dbias.data());
  EXPECT_TRUE(close(dx, numerical_gradient([&](auto& p) { return objective(p, kernel, bias); }, x)));
  EXPECT_TRUE(close(dkernel, numerical_gradient([&](auto& p) { return objective(x, p, bias); }, kernel)));
  EXPECT_TRUE(close(dbias, numerical_gradient([&](auto& p) { return objective(x, kernel, p); }, bias)));
}

class ActivationGradient : public ::testing::TestWithParam<std::string> {};

TEST_P(ActivationGradient, MatchesCentralDifferences) {
  const Activation activation = parse_activation(GetParam());
  const int64_t rows = 3, columns = 5;
  // Inputs away from the kinks of relu (0), relu6 (6) and hard_sigmoid (-3, 3).
  auto x = random_values(size_t(rows * columns), 11, -4, 4);
  for (double& v : x) {
    for (double kink : {0.0, 6.0, -3.0, 3.0}) {
      if (std::abs(v - kink) < 0.05) v += 0.1;
    }
  }
  auto upstream = random_values(x.size(), 12);
  auto forward = [&](const std::vector<double>& xs) {
    std::vector<double> y(xs.size());
    activation_forward<double>(activation, rows, columns, xs.data(), y.data());
    return y;
  };
  std::vector<double> y = forward(x), dx(x.size());
  activation_backward<double>(activation, rows, columns, x.data(), y.data(), upstream.data(), dx.data());
  EXPECT_TRUE(close(dx, numerical_gradient([&](auto& p) { return dot(forward(p), upstream); }, x)));
}

INSTANTIATE_TEST_SUITE_P(EveryBuiltin, ActivationGradient,
                         ::testing::Values("linear", "relu", "relu6", "leaky_relu", "elu", "selu",
                                           "gelu", "silu", "mish", "softplus", "softsign",
                                           "sigmoid", "hard_sigmoid", "hard_silu", "tanh",
                                           "exponential", "softmax", "log_softmax"));

TEST(WindowGeometry, FollowsTensorFlowPadding) {
  WindowGeometry same = make_window_geometry(1, 7, 8, 1, 1, 3, 3, 2, 2, Padding::same);
  EXPECT_EQ(same.out_height, 4);  // ceil(7 / 2)
  EXPECT_EQ(same.out_width, 4);
  EXPECT_EQ(same.pad_top, 1);
  EXPECT_EQ(same.pad_bottom, 1);
  EXPECT_EQ(same.pad_left, 0);  // total 1: the extra column goes at the end
  EXPECT_EQ(same.pad_right, 1);
  WindowGeometry valid = make_window_geometry(1, 28, 28, 1, 32, 3, 3, 1, 1, Padding::valid);
  EXPECT_EQ(valid.out_height, 26);
  EXPECT_THROW(make_window_geometry(1, 2, 2, 1, 1, 3, 3, 1, 1, Padding::valid), Error);
}

}  // namespace
}  // namespace tenfold::kernels::reference
