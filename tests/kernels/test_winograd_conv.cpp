// WinogradConv2DKernel against the reference convolution computed in double: forward (bias,
// relu), input gradient and weight gradient, on images whose last tiles run past their edge
// (odd sizes), 'same' and 'valid' padding, chunks of tiles that end inside an image, and the
// team of threads the tests run with (OMP_NUM_THREADS=2).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "kernels/reference/conv2d.h"
#include "kernels/winograd_conv.h"
#include "support/check.h"

namespace tenfold::kernels {
namespace {

using testing::random_values;

struct Case {
  int64_t batch, height, width, in_channels, filters;
  Padding padding;
  int64_t chunk_tiles;  // 0: the kernel's own choice
};

/// The largest difference from `expected`.
double worst_error(const std::vector<float>& actual, const std::vector<double>& expected) {
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i)
    worst = std::max(worst, std::abs(double(actual[i]) - expected[i]));
  return worst;
}

std::vector<float> as_floats(const std::vector<double>& values) {
  return {values.begin(), values.end()};
}

TEST(WinogradConv2D, MatchesReferenceInDouble) {
  const Case cases[] = {{2, 9, 9, 16, 32, Padding::same, 7}, {3, 8, 6, 32, 16, Padding::valid, 5},
                        {1, 5, 7, 48, 16, Padding::same, 0}, {2, 3, 3, 16, 16, Padding::valid, 1},
                        {2, 4, 4, 16, 48, Padding::same, 3}, {1, 14, 14, 64, 64, Padding::same, 0}};
  for (const Case& c : cases) {
    const WindowGeometry g = make_window_geometry(c.batch, c.height, c.width, c.in_channels,
                                                  c.filters, 3, 3, 1, 1, c.padding);
    SCOPED_TRACE(::testing::Message()
                 << c.batch << "x" << c.height << "x" << c.width << " " << c.in_channels << "->"
                 << c.filters << (c.padding == Padding::same ? " same" : " valid") << " chunk "
                 << c.chunk_tiles);
    ASSERT_TRUE(WinogradConv2DKernel::handles(g));
    const int64_t in_count = c.batch * c.height * c.width * c.in_channels;
    const int64_t out_count = c.batch * g.out_height * g.out_width * c.filters;
    // Values in [-1, 1], exact in float32 (random_values' doubles rounded once).
    const std::vector<float> src = as_floats(random_values(size_t(in_count), 1));
    const std::vector<float> kernel =
        as_floats(random_values(size_t(9 * c.in_channels * c.filters), 2));
    const std::vector<float> bias = as_floats(random_values(size_t(c.filters), 3));
    const std::vector<float> diff_dst = as_floats(random_values(size_t(out_count), 4));
    const std::vector<double> src_d(src.begin(), src.end()), kernel_d(kernel.begin(), kernel.end()),
        bias_d(bias.begin(), bias.end()), diff_dst_d(diff_dst.begin(), diff_dst.end());
    std::vector<double> dst_d(static_cast<size_t>(out_count)),
        diff_src_d(static_cast<size_t>(in_count)), diff_kernel_d(kernel.size());
    reference::conv2d_forward<double>(g, src_d.data(), kernel_d.data(), bias_d.data(),
                                      dst_d.data());
    reference::conv2d_backward<double>(g, src_d.data(), kernel_d.data(), diff_dst_d.data(),
                                       diff_src_d.data(), diff_kernel_d.data(), nullptr);

    WinogradConv2DKernel winograd(g, c.chunk_tiles);
    winograd.set_weights(kernel.data());
    std::vector<float> dst(static_cast<size_t>(out_count)), diff_src(static_cast<size_t>(in_count)),
        diff_kernel(kernel.size(), 7.0f);  // overwritten
    winograd.forward(src.data(), bias.data(), false, dst.data());
    winograd.backward_data(diff_dst.data(), diff_src.data());
    winograd.backward_weights(src.data(), diff_dst.data(), diff_kernel.data());
    // Sums of 9 x channels products of values in [-1, 1] (the weight gradient's: of every output
    // pixel's): float32's rounding grows as the square root of the terms, and the transforms' sums
    // add to it. 16 x 2^-24 x sqrt(terms): 1.1e-5 for 144 terms; the errors seen were at most half
    // of it (1.2e-5 of 2.3e-5 on 64 -> 64's input gradient).
    auto tolerance = [](int64_t terms) {
      return 16 * std::sqrt(double(terms)) * std::ldexp(1.0, -24);
    };
    EXPECT_LE(worst_error(dst, dst_d), tolerance(9 * c.in_channels)) << "forward";
    EXPECT_LE(worst_error(diff_src, diff_src_d), tolerance(9 * c.filters)) << "input gradient";
    EXPECT_LE(worst_error(diff_kernel, diff_kernel_d),
              tolerance(c.batch * g.out_height * g.out_width))
        << "weight gradient";

    std::vector<double> relu_d = dst_d;
    for (double& value : relu_d) value = std::max(value, 0.0);
    winograd.forward(src.data(), bias.data(), true, dst.data());
    EXPECT_LE(worst_error(dst, relu_d), tolerance(9 * c.in_channels)) << "forward with relu";
  }
}

TEST(WinogradConv2D, HandlesOnly3x3AtStrideOneOverWholeVectors) {
  auto geometry = [](int64_t in, int64_t out, int64_t window, int64_t stride, int64_t dilation,
                     int64_t groups) {
    return make_window_geometry(2, 9, 9, in, out, window, window, stride, stride, Padding::same,
                                dilation, dilation, groups);
  };
  EXPECT_TRUE(WinogradConv2DKernel::handles(geometry(16, 32, 3, 1, 1, 1)));
  EXPECT_FALSE(WinogradConv2DKernel::handles(geometry(16, 32, 5, 1, 1, 1)));
  EXPECT_FALSE(WinogradConv2DKernel::handles(geometry(16, 32, 3, 2, 1, 1)));
  EXPECT_FALSE(WinogradConv2DKernel::handles(geometry(16, 32, 3, 1, 2, 1)));
  EXPECT_FALSE(WinogradConv2DKernel::handles(geometry(32, 32, 3, 1, 1, 2)));
  EXPECT_FALSE(WinogradConv2DKernel::handles(geometry(12, 32, 3, 1, 1, 1)));
  EXPECT_FALSE(WinogradConv2DKernel::handles(geometry(16, 4, 3, 1, 1, 1)));
  EXPECT_THROW(WinogradConv2DKernel(geometry(16, 32, 5, 1, 1, 1)), Error);
}

}  // namespace
}  // namespace tenfold::kernels
