// The oneDNN kernels against the plain C++ reference, in float, on geometries that exercise
// padding, strides, odd sizes, one input channel and every fused activation.
#include <gtest/gtest.h>

#include "kernels/onednn/activation.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/onednn/inner_product.h"
#include "kernels/onednn/pooling.h"
#include "kernels/onednn/weight_layout.h"
#include "kernels/reference/activation.h"
#include "kernels/reference/conv2d.h"
#include "kernels/reference/dense.h"
#include "kernels/reference/pooling.h"
#include "support/check.h"

namespace tenfold::kernels {
namespace {

using testing::all_close;
using testing::random_values;
using testing::to_floats;

constexpr double rtol = 1e-4, atol = 1e-5;

std::vector<double> as_doubles(const std::vector<float>& values) {
  return std::vector<double>(values.begin(), values.end());
}

/// Weights in oneDNN's preferred layout, converted from Keras' layout.
std::vector<float> to_native(const onednn::OnednnWeightLayout& layout,
                             const std::vector<float>& keras) {
  std::vector<float> native(size_t(layout.native_elements()));
  layout.from_keras(keras.data(), native.data());
  return native;
}

std::vector<float> to_keras(const onednn::OnednnWeightLayout& layout,
                            const std::vector<float>& native, size_t count) {
  std::vector<float> keras(count);
  layout.to_keras(native.data(), keras.data());
  return keras;
}

struct ConvCase {
  int64_t batch, height, width, channels, filters, kh, kw, sh, sw;
  Padding padding;
  Activation activation;
};

class OnednnConv2D : public ::testing::TestWithParam<ConvCase> {};

TEST_P(OnednnConv2D, ForwardAndBackwardMatchReference) {
  ConvCase c = GetParam();
  WindowGeometry g = make_window_geometry(c.batch, c.height, c.width, c.channels, c.filters, c.kh,
                                          c.kw, c.sh, c.sw, c.padding);
  size_t out_count = size_t(g.batch * g.out_height * g.out_width * g.out_channels);
  auto x = to_floats(random_values(size_t(c.batch * c.height * c.width * c.channels), 1));
  auto kernel = to_floats(random_values(size_t(c.kh * c.kw * c.channels * c.filters), 2));
  auto bias = to_floats(random_values(size_t(c.filters), 3));
  auto upstream = to_floats(random_values(out_count, 4));

  // Reference: convolution, then the activation, and their backward passes.
  std::vector<float> pre(out_count), expected_y(out_count), expected_dpre(out_count);
  std::vector<float> expected_dx(x.size()), expected_dkernel(kernel.size()), expected_dbias(bias.size());
  reference::conv2d_forward<float>(g, x.data(), kernel.data(), bias.data(), pre.data());
  reference::activation_forward<float>(c.activation, int64_t(out_count), pre.data(), expected_y.data());
  reference::activation_backward<float>(c.activation, int64_t(out_count), expected_y.data(),
                                        upstream.data(), expected_dpre.data());
  reference::conv2d_backward<float>(g, x.data(), kernel.data(), expected_dpre.data(),
                                    expected_dx.data(), expected_dkernel.data(), expected_dbias.data());

  onednn::OnednnWeightLayout layout(onednn::Conv2DKernel::keras_weights_desc(g),
                                    onednn::Conv2DKernel::preferred_weights_desc(g));
  onednn::Conv2DKernel conv(g, c.activation, true, layout.native_desc(), true);
  auto native_kernel = to_native(layout, kernel);
  std::vector<float> y(out_count), dx(x.size()), dnative(native_kernel.size()), dbias(bias.size());
  conv.forward(x.data(), native_kernel.data(), bias.data(), y.data());
  EXPECT_TRUE(all_close(y, as_doubles(expected_y), rtol, atol));
  std::vector<float> dy = upstream;
  conv.backward(x.data(), y.data(), dy.data(), native_kernel.data(), dx.data(), dnative.data(),
                dbias.data());
  EXPECT_TRUE(all_close(dx, as_doubles(expected_dx), rtol, atol));
  EXPECT_TRUE(all_close(to_keras(layout, dnative, kernel.size()), as_doubles(expected_dkernel), rtol, 1e-4));
  EXPECT_TRUE(all_close(dbias, as_doubles(expected_dbias), rtol, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, OnednnConv2D,
    ::testing::Values(ConvCase{4, 28, 28, 1, 32, 3, 3, 1, 1, Padding::valid, Activation::relu},
                      ConvCase{3, 9, 7, 3, 5, 3, 3, 2, 2, Padding::same, Activation::linear},
                      ConvCase{2, 8, 8, 4, 16, 5, 3, 1, 2, Padding::same, Activation::tanh},
                      ConvCase{2, 6, 6, 2, 3, 2, 2, 1, 1, Padding::valid, Activation::sigmoid}));

TEST(OnednnInnerProduct, ForwardAndBackwardMatchReference) {
  const int64_t rows = 37, in = 300, units = 20;
  for (Activation activation : {Activation::linear, Activation::relu, Activation::tanh}) {
    auto x = to_floats(random_values(size_t(rows * in), 1));
    auto kernel = to_floats(random_values(size_t(in * units), 2, -0.1, 0.1));
    auto bias = to_floats(random_values(size_t(units), 3));
    auto upstream = to_floats(random_values(size_t(rows * units), 4));
    size_t out_count = size_t(rows * units);
    std::vector<float> pre(out_count), expected_y(out_count), expected_dpre(out_count);
    std::vector<float> expected_dx(x.size()), expected_dkernel(kernel.size()), expected_dbias(bias.size());
    reference::dense_forward<float>(rows, in, units, x.data(), kernel.data(), bias.data(), pre.data());
    reference::activation_forward<float>(activation, int64_t(out_count), pre.data(), expected_y.data());
    reference::activation_backward<float>(activation, int64_t(out_count), expected_y.data(),
                                          upstream.data(), expected_dpre.data());
    reference::dense_backward<float>(rows, in, units, x.data(), kernel.data(), expected_dpre.data(),
                                     expected_dx.data(), expected_dkernel.data(), expected_dbias.data());

    onednn::OnednnWeightLayout layout(onednn::InnerProductKernel::keras_weights_desc(in, units),
                                      onednn::InnerProductKernel::preferred_weights_desc(256, in, units));
    onednn::InnerProductKernel dense(rows, in, units, activation, true, layout.native_desc(), true);
    auto native_kernel = to_native(layout, kernel);
    std::vector<float> y(out_count), dx(x.size()), dnative(native_kernel.size()), dbias(bias.size());
    dense.forward(x.data(), native_kernel.data(), bias.data(), y.data());
    EXPECT_TRUE(all_close(y, as_doubles(expected_y), rtol, atol)) << activation_name(activation);
    std::vector<float> dy = upstream;
    dense.backward(x.data(), y.data(), dy.data(), native_kernel.data(), dx.data(), dnative.data(),
                   dbias.data());
    EXPECT_TRUE(all_close(dx, as_doubles(expected_dx), rtol, atol));
    EXPECT_TRUE(all_close(to_keras(layout, dnative, kernel.size()), as_doubles(expected_dkernel), rtol, 1e-4));
    EXPECT_TRUE(all_close(dbias, as_doubles(expected_dbias), rtol, 1e-4));
  }
}

struct PoolCase {
  reference::PoolKind kind;
  int64_t height, width, pool, stride;
  Padding padding;
};

class OnednnPooling : public ::testing::TestWithParam<PoolCase> {};

TEST_P(OnednnPooling, ForwardAndBackwardMatchReference) {
  PoolCase c = GetParam();
  WindowGeometry g = make_window_geometry(3, c.height, c.width, 5, 5, c.pool, c.pool, c.stride,
                                          c.stride, c.padding);
  size_t out_count = size_t(g.batch * g.out_height * g.out_width * g.in_channels);
  auto x = to_floats(random_values(size_t(3 * c.height * c.width * 5), 1));
  auto upstream = to_floats(random_values(out_count, 2));
  std::vector<float> expected_y(out_count), expected_dx(x.size()), y(out_count), dx(x.size());
  reference::pool_forward<float>(c.kind, g, x.data(), expected_y.data());
  reference::pool_backward<float>(c.kind, g, x.data(), upstream.data(), expected_dx.data());
  onednn::PoolingKernel pool(c.kind, g);
  std::vector<std::byte> workspace(pool.workspace_bytes());
  pool.forward(x.data(), y.data(), workspace.data());
  pool.backward(upstream.data(), dx.data(), workspace.data());
  EXPECT_TRUE(all_close(y, as_doubles(expected_y), rtol, atol));
  EXPECT_TRUE(all_close(dx, as_doubles(expected_dx), rtol, atol));
}

INSTANTIATE_TEST_SUITE_P(
    Windows, OnednnPooling,
    ::testing::Values(PoolCase{reference::PoolKind::max, 26, 26, 2, 2, Padding::valid},
                      PoolCase{reference::PoolKind::max, 7, 5, 3, 2, Padding::same},
                      PoolCase{reference::PoolKind::average, 6, 7, 2, 2, Padding::valid},
                      PoolCase{reference::PoolKind::average, 5, 7, 2, 2, Padding::same}));

class OnednnActivation : public ::testing::TestWithParam<Activation> {};

TEST_P(OnednnActivation, ForwardAndBackwardMatchReference) {
  Activation activation = GetParam();
  const int64_t rows = 7, columns = 10;
  auto x = to_floats(random_values(size_t(rows * columns), 1, -3, 3));
  auto upstream = to_floats(random_values(x.size(), 2));
  std::vector<float> expected_y(x.size()), expected_dx(x.size()), y(x.size()), dx(x.size());
  if (activation == Activation::softmax) {
    reference::softmax_forward<float>(rows, columns, x.data(), expected_y.data());
    reference::softmax_backward<float>(rows, columns, expected_y.data(), upstream.data(), expected_dx.data());
  } else {
    reference::activation_forward<float>(activation, int64_t(x.size()), x.data(), expected_y.data());
    reference::activation_backward<float>(activation, int64_t(x.size()), expected_y.data(),
                                          upstream.data(), expected_dx.data());
  }
  onednn::ActivationKernel kernel(activation, rows, columns);
  kernel.forward(x.data(), y.data());
  kernel.backward(y.data(), upstream.data(), dx.data());
  EXPECT_TRUE(all_close(y, as_doubles(expected_y), rtol, atol));
  EXPECT_TRUE(all_close(dx, as_doubles(expected_dx), rtol, atol));
}

INSTANTIATE_TEST_SUITE_P(All, OnednnActivation,
                         ::testing::Values(Activation::linear, Activation::relu,
                                           Activation::sigmoid, Activation::tanh,
                                           Activation::softmax));

}  // namespace
}  // namespace tenfold::kernels
