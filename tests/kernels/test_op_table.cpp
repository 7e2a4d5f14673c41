// The op table (as ggml's test-backend-ops): one row per layer configuration Tenfold accepts.
// Each row runs the oneDNN kernel against the plain C++ reference, forward and backward, on a
// small shape, then creates the same kernel at the shapes training uses (per-replica batches
// 83, 256 and 512, weights in the layout the layer stores) and prints the implementation
// oneDNN picked for every primitive. A reference implementation fails the row: the policy is
// `error` here. A new layer or argument is one more row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/bfloat16.h"
#include "kernels/direct_conv.h"
#include "kernels/few_channel_conv.h"
#include "kernels/onednn/activation.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/onednn/dense.h"
#include "kernels/onednn/pooling.h"
#include "kernels/onednn/weight_layout.h"
#include "kernels/reference/activation.h"
#include "kernels/reference/conv2d.h"
#include "kernels/reference/dense.h"
#include "kernels/reference/pooling.h"
#include "layers/dtype_policy.h"
#include "support/check.h"

namespace tenfold::kernels {
namespace {

using testing::all_close;
using testing::error_of;
using testing::random_values;
using testing::to_floats;

constexpr double rtol = 1e-4, atol = 1e-5;

/// Absolute tolerance for a sum of `terms` float products of values in [-1, 1]: rounding
/// error grows as the square root of the length (seen: 4.5e-5 for 6272 terms).
double sum_atol(int64_t terms) { return std::max(atol, 2e-6 * std::sqrt(double(terms))); }
// Per-replica batches training compiles for: a remainder batch, and full ones.
constexpr int64_t training_batches[] = {83, 256, 512};
// The batch a Conv2D picks its stored weight layout at (layers/conv2d.cpp).
constexpr int64_t layout_batch = 256;

std::vector<double> as_doubles(const std::vector<float>& values) {
  return std::vector<double>(values.begin(), values.end());
}

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

void print_row(const std::string& row, const std::vector<std::string>& implementations) {
  std::string line = "op table | " + row;
  for (const std::string& implementation : implementations) line += " | " + implementation;
  std::printf("%s\n", line.c_str());
}

class OpTable : public ::testing::Test {
 protected:
  void SetUp() override {
    onednn::set_reference_kernel_policy(onednn::ReferenceKernelPolicy::error);
  }
};

// ---- Conv2D: kernel 1/3/5/7 x strides 1/2 x same/valid x channels x first layer or not.

struct ConvRow {
  int64_t kernel, stride;
  Padding padding;
  int64_t channels, filters;
  bool first_layer;
  Activation activation;
  int64_t dilation = 1, groups = 1;  // groups == channels: a depthwise convolution
  std::string name() const {
    return "Conv2D k" + std::to_string(kernel) + " s" + std::to_string(stride) + " " +
           padding_name(padding) + " " + std::to_string(channels) + "->" +
           std::to_string(filters) + (dilation > 1 ? " dilation" + std::to_string(dilation) : "") +
           (groups > 1 ? (groups == channels ? " depthwise" : " groups" + std::to_string(groups)) : "") +
           (first_layer ? " first" : "") + " " + activation_name(activation);
  }
  WindowGeometry geometry(int64_t batch, int64_t size) const {
    return make_window_geometry(batch, size, size, channels, filters, kernel, kernel, stride, stride,
                                padding, dilation, dilation, groups);
  }
};

std::vector<ConvRow> conv_rows() {
  struct Channels {
    int64_t in, out;
    bool first;
  };
  // First layers of 6, 40 and 64 filters: DirectConv pads the filters to 16, 48 and 64.
  const Channels channel_pairs[] = {{1, 32, true},   {3, 16, true},    {1, 6, true},     {4, 40, true},
                                    {3, 64, true},   {1, 32, false},   {3, 16, false},   {16, 16, false},
                                    {32, 64, false}, {64, 128, false}, {128, 128, false}};
  const Activation fused[] = {Activation::relu, Activation::linear, Activation::sigmoid,
                              Activation::tanh, parse_activation("relu6"),
                              parse_activation("leaky_relu"), Activation::elu};
  std::vector<ConvRow> rows;
  for (int64_t kernel : {1, 3, 5, 7})
    for (int64_t stride : {1, 2})
      for (Padding padding : {Padding::same, Padding::valid})
        for (const Channels& c : channel_pairs) {
          rows.push_back({kernel, stride, padding, c.in, c.out, c.first,
                          fused[rows.size() % std::size(fused)]});
        }
  // Dilated (3x3 and 5x5, dilation 2 and 3), grouped, and depthwise (MobileNet's 3x3, with
  // depth multipliers 1 and 2, strides 1 and 2).
  for (int64_t kernel : {3, 5})
    for (int64_t dilation : {2, 3})
      for (Padding padding : {Padding::same, Padding::valid}) {
        const bool fits = (kernel - 1) * dilation + 1 <= 9;  // the 9x9 inputs checked below
        if (padding == Padding::same || fits) {
          rows.push_back({kernel, 1, padding, 16, 32, false, Activation::relu, dilation, 1});
        }
      }
  // Where Winograd's kernels may run (conv2d.cpp's winograd_method): 3x3 stride 1 with 16
  // channels and more (which of the two runs is measured).
  rows.push_back({3, 1, Padding::same, 32, 32, false, Activation::relu});
  rows.push_back({3, 1, Padding::same, 64, 64, false, Activation::linear});
  rows.push_back({3, 1, Padding::valid, 32, 64, false, Activation::relu});
  rows.push_back({3, 1, Padding::same, 16, 32, false, Activation::relu, 1, 4});
  rows.push_back({3, 2, Padding::same, 32, 64, false, Activation::linear, 1, 2});
  rows.push_back({3, 2, Padding::valid, 3, 6, true, Activation::relu, 1, 3});
  for (int64_t channels : {16, 32, 64})
    for (int64_t stride : {1, 2})
      for (int64_t multiplier : {1, 2}) {
        rows.push_back({3, stride, Padding::same, channels, channels * multiplier, false,
                        parse_activation("relu6"), 1, channels});
      }
  return rows;
}

/// The layout a Conv2D layer stores its kernel in, for inputs of `g`'s size.
onednn::OnednnWeightLayout conv_layout(WindowGeometry g) {
  g.batch = layout_batch;
  return {onednn::Conv2DKernel::keras_weights_desc(g),
          onednn::Conv2DKernel::preferred_weights_desc(g)};
}

/// The reference kernels' forward and gradients of a row's convolution and activation, the
/// pre-activation rounded to bfloat16 when `round_pre_activation` (as the bfloat16 kernels
/// round theirs, so both see an activation's kink at the same place).
struct ConvReference {
  std::vector<float> y, dx, dkernel, dbias;
};

ConvReference reference_conv(const ConvRow& row, const WindowGeometry& g, const std::vector<float>& x,
                             const std::vector<float>& kernel, const std::vector<float>& bias,
                             const std::vector<float>& upstream, bool round_pre_activation) {
  const size_t out_count = upstream.size();
  std::vector<float> pre(out_count), dpre(out_count);
  ConvReference expected{std::vector<float>(out_count), std::vector<float>(x.size()),
                         std::vector<float>(kernel.size()), std::vector<float>(bias.size())};
  reference::conv2d_forward<float>(g, x.data(), kernel.data(), bias.data(), pre.data());
  if (round_pre_activation) round_to_bfloat16(pre.data(), pre.data(), int64_t(out_count));
  reference::activation_forward<float>(row.activation, 1, int64_t(out_count), pre.data(), expected.y.data());
  reference::activation_backward<float>(row.activation, 1, int64_t(out_count), pre.data(), expected.y.data(),
                                        upstream.data(), dpre.data());
  reference::conv2d_backward<float>(g, x.data(), kernel.data(), dpre.data(), expected.dx.data(),
                                    expected.dkernel.data(), expected.dbias.data());
  return expected;
}

/// A row's kernel made by `make_kernel(g, layout)` (oneDNN's by default) against the
/// reference on `batch` `size` x `size` images.
template <typename MakeKernel>
void check_conv_against_reference(const ConvRow& row, int64_t size, MakeKernel make_kernel, int64_t batch = 2) {
  WindowGeometry g = row.geometry(batch, size);
  size_t out_count = size_t(g.batch * g.out_height * g.out_width * g.out_channels);
  auto x = to_floats(random_values(size_t(g.batch * size * size * row.channels), 1));
  const int64_t group_channels = row.channels / row.groups;
  auto kernel = to_floats(random_values(size_t(row.kernel * row.kernel * group_channels * row.filters), 2));
  auto bias = to_floats(random_values(size_t(row.filters), 3));
  auto upstream = to_floats(random_values(out_count, 4));
  const ConvReference expected = reference_conv(row, g, x, kernel, bias, upstream, false);

  onednn::OnednnWeightLayout layout = conv_layout(g);
  auto conv = make_kernel(g, layout);
  std::shared_ptr<std::byte> scratch;
  if constexpr (requires { conv.bind_scratch(nullptr); }) {
    scratch = allocate_aligned(conv.scratch_bytes());  // a Winograd kernel's layout copies
    conv.bind_scratch(scratch.get());
  }
  auto native_kernel = to_native(layout, kernel);
  std::vector<float> y(out_count), dx(x.size()), dnative(native_kernel.size()), dbias(bias.size());
  conv.forward(x.data(), native_kernel.data(), bias.data(), y.data());
  EXPECT_TRUE(all_close(y, as_doubles(expected.y), rtol,
                        sum_atol(row.kernel * row.kernel * group_channels))) << "forward";
  std::vector<float> dy = upstream;
  conv.backward(x.data(), y.data(), dy.data(), native_kernel.data(),
                row.first_layer ? nullptr : dx.data(), dnative.data(), dbias.data());
  if (!row.first_layer) {
    EXPECT_TRUE(all_close(dx, as_doubles(expected.dx), rtol,
                          sum_atol(row.kernel * row.kernel * row.filters / row.groups))) << "dx";
  }
  // Sums over every output pixel (the reference's own float sums err as much as the kernel's).
  const double gradient_atol = std::max(1e-4, sum_atol(g.batch * g.out_height * g.out_width));
  EXPECT_TRUE(all_close(to_keras(layout, dnative, kernel.size()), as_doubles(expected.dkernel),
                        rtol, gradient_atol)) << "dkernel";
  EXPECT_TRUE(all_close(dbias, as_doubles(expected.dbias), rtol, gradient_atol)) << "dbias";
}

void check_conv_against_reference(const ConvRow& row) {
  check_conv_against_reference(row, 9, [&](const WindowGeometry& g, const onednn::OnednnWeightLayout& layout) {
    return onednn::Conv2DKernel(g, row.activation, true, layout.native_desc(), !row.first_layer);
  });
}

class Conv2DRows : public OpTable, public ::testing::WithParamInterface<ConvRow> {};

TEST_P(Conv2DRows, MatchesReferenceAndRunsNoReferenceKernel) {
  const ConvRow& row = GetParam();
  check_conv_against_reference(row);
  // Training shapes: 28x28 images for a first layer, 14x14 feature maps inside a network.
  const int64_t size = row.first_layer ? 28 : 14;
  for (int64_t batch : training_batches) {
    WindowGeometry g = row.geometry(batch, size);
    onednn::OnednnWeightLayout layout = conv_layout(g);
    onednn::Conv2DKernel conv(g, row.activation, true, layout.native_desc(), !row.first_layer);
    if (batch == layout_batch) print_row(row.name() + " " + std::to_string(size) + "x" +
                                             std::to_string(size), conv.implementations());
  }
}

INSTANTIATE_TEST_SUITE_P(Table, Conv2DRows, ::testing::ValuesIn(conv_rows()));

TEST_F(OpTable, Conv2DRunsWinogradOnlyWhereItMayPay) {
  // Where Winograd's kernels may run (3x3, stride 1, float32, 16 channels and more in and out:
  // oneDNN's, or Tenfold's where oneDNN has none) the faster of it and direct is measured once
  // per geometry: every primitive of the kernel then runs the one picked, and its scratch holds
  // the blocked copies exactly when it is oneDNN's Winograd.
  auto is_winograd = [](const std::string& implementation) {
    return implementation.find("wino") != std::string::npos;
  };
  for (const ConvRow& row : {ConvRow{3, 1, Padding::same, 64, 64, false, Activation::relu},
                             ConvRow{3, 1, Padding::same, 32, 32, false, Activation::linear}}) {
    WindowGeometry g = row.geometry(layout_batch, 14);
    onednn::Conv2DKernel conv(g, row.activation, true, conv_layout(g).native_desc(), true);
    const std::vector<std::string> implementations = conv.implementations();
    ASSERT_EQ(implementations.size(), 3u);  // forward, backward-data, backward-weights
    for (const std::string& implementation : implementations) {
      EXPECT_EQ(is_winograd(implementation), conv.winograd()) << implementation;
    }
    const bool blocked_copies = conv.winograd() && onednn::winograd_available();
    EXPECT_EQ(conv.scratch_bytes(), blocked_copies ? size_t(2 * 256 * 14 * 14 * row.channels * 4) : 0u);
  }
  // Elsewhere direct, unmeasured: stride 2, 5x5, channels neither 16 and more nor whole vectors
  // (12), bfloat16.
  const ConvRow direct_rows[] = {{3, 2, Padding::same, 32, 64, false, Activation::relu},
                                 {5, 1, Padding::same, 32, 32, false, Activation::relu},
                                 {3, 1, Padding::same, 12, 32, false, Activation::relu},
                                 {3, 1, Padding::same, 32, 12, false, Activation::relu}};
  for (const ConvRow& row : direct_rows) {
    WindowGeometry g = row.geometry(layout_batch, 14);
    onednn::Conv2DKernel conv(g, row.activation, true, conv_layout(g).native_desc(), true);
    EXPECT_FALSE(conv.winograd()) << row.name();
  }
  if (cpu_has_bfloat16_units()) {
    WindowGeometry g = ConvRow{3, 1, Padding::same, 64, 64, false, Activation::relu}.geometry(layout_batch, 14);
    onednn::Conv2DKernel bfloat16_conv(g, Activation::relu, true, conv_layout(g).native_desc(), true, DType::bfloat16);
    EXPECT_FALSE(bfloat16_conv.winograd());
  }
}

TEST_F(OpTable, TenfoldWinogradInConv2DKernelMatchesReference) {
  // Conv2DKernel running Tenfold's Winograd kernel (the one it times against direct where oneDNN
  // has no Winograd, as on AVX2): weights from the stored layout, bias, relu in its last pass,
  // other activations after it, gradients back in the stored layout; a first layer computes no
  // input gradient. Every CPU runs it.
  using Method = onednn::Conv2DKernel::Method;
  const ConvRow rows[] = {{3, 1, Padding::same, 16, 32, false, Activation::relu},
                          {3, 1, Padding::valid, 32, 16, false, Activation::linear},
                          {3, 1, Padding::same, 16, 16, false, Activation::tanh},
                          {3, 1, Padding::same, 32, 32, false, parse_activation("relu6")},
                          {3, 1, Padding::same, 16, 48, true, Activation::relu}};
  for (const ConvRow& row : rows) {
    SCOPED_TRACE(row.name());
    check_conv_against_reference(row, 9, [&](const WindowGeometry& g, const onednn::OnednnWeightLayout& layout) {
      onednn::Conv2DKernel conv(g, row.activation, true, layout.native_desc(), !row.first_layer, DType::float32,
                                false, onednn::Conv2DKernel::WeightGradients::float32, Method::tenfold_winograd);
      EXPECT_TRUE(conv.winograd());
      const std::vector<std::string> implementations = conv.implementations();
      EXPECT_EQ(implementations.size(), row.first_layer ? 2u : 3u);
      for (const std::string& implementation : implementations) {
        EXPECT_NE(implementation.find("tenfold:winograd_2x2_3x3"), std::string::npos) << implementation;
      }
      return conv;
    });
  }
}

TEST_F(OpTable, WinogradCopiesOnlyActivationsWhoseLayoutDiffers) {
  // nChw16c over 16 channels is NHWC's own bytes: Winograd reads and writes those in place, and
  // copies the others (through its scratch), with and without a fused activation.
  if (!onednn::winograd_available()) GTEST_SKIP() << "oneDNN has no Winograd kernels on this CPU (AVX-512 only)";
  using Method = onednn::Conv2DKernel::Method;
  const ConvRow rows[] = {{3, 1, Padding::same, 16, 16, false, Activation::relu},
                          {3, 1, Padding::same, 16, 32, false, Activation::linear},
                          {3, 1, Padding::same, 32, 16, false, Activation::relu},
                          {3, 1, Padding::valid, 32, 48, false, Activation::relu}};
  for (const ConvRow& row : rows) {
    SCOPED_TRACE(row.name());
    check_conv_against_reference(row, 9, [&](const WindowGeometry& g, const onednn::OnednnWeightLayout& layout) {
      onednn::Conv2DKernel conv(g, row.activation, true, layout.native_desc(), true, DType::float32, false,
                                onednn::Conv2DKernel::WeightGradients::float32, Method::winograd);
      EXPECT_TRUE(conv.winograd());
      const size_t input_copy = row.channels == 16 ? 0 : aligned_size(size_t(g.batch * 9 * 9 * row.channels) * 4);
      const size_t output_copy = row.filters == 16 ? 0 : size_t(g.batch * g.out_height * g.out_width * row.filters) * 4;
      EXPECT_EQ(conv.scratch_bytes(), input_copy + output_copy);
      return conv;
    });
  }
}

TEST_F(OpTable, Conv2DWithoutWeightGradientsMakesNoBackwardWeightsPrimitive) {
  // Inference and frozen layers: forward and backward-data as with weight gradients, no
  // backward-weights primitive, and backward leaves the weight gradients alone.
  const ConvRow row{3, 1, Padding::same, 16, 32, false, Activation::relu};
  const WindowGeometry g = row.geometry(4, 14);
  onednn::OnednnWeightLayout layout = conv_layout(g);
  using Gradients = onednn::Conv2DKernel::WeightGradients;
  onednn::Conv2DKernel with(g, row.activation, true, layout.native_desc(), true);
  onednn::Conv2DKernel without(g, row.activation, true, layout.native_desc(), true, DType::float32, false,
                               Gradients::none);
  ASSERT_EQ(with.implementations().size(), 3u);
  ASSERT_EQ(without.implementations().size(), 2u);  // forward, backward-data
  EXPECT_TRUE(without.implementations()[1].starts_with("backward-data"));
  auto x = to_floats(random_values(size_t(4 * 14 * 14 * 16), 1));
  auto kernel = to_native(layout, to_floats(random_values(size_t(3 * 3 * 16 * 32), 2)));
  auto bias = to_floats(random_values(32, 3));
  auto upstream = to_floats(random_values(size_t(4 * 14 * 14 * 32), 4));
  std::vector<float> y_with(upstream.size()), y_without(upstream.size()), dx_with(x.size()), dx_without(x.size());
  std::vector<float> dkernel_with(kernel.size()), dbias_with(32), untouched(kernel.size(), 7.0f), untouched_bias(32, 7.0f);
  with.forward(x.data(), kernel.data(), bias.data(), y_with.data());
  without.forward(x.data(), kernel.data(), bias.data(), y_without.data());
  EXPECT_EQ(y_with, y_without);
  auto dy = upstream;
  with.backward(x.data(), y_with.data(), upstream.data(), kernel.data(), dx_with.data(), dkernel_with.data(),
                dbias_with.data());
  without.backward(x.data(), y_without.data(), dy.data(), kernel.data(), dx_without.data(), untouched.data(),
                   untouched_bias.data());
  EXPECT_EQ(dx_with, dx_without);
  EXPECT_EQ(untouched, std::vector<float>(kernel.size(), 7.0f));
  EXPECT_EQ(untouched_bias, std::vector<float>(32, 7.0f));
  EXPECT_THROW(without.backward_weights(x.data(), dy.data(), untouched.data(), untouched_bias.data(), false),
               std::exception);
}

// The rows FewChannelConv2DKernel takes (a first layer of at most 4 channels into at most 16
// filters, stride 1), and filter counts that fill no vector evenly (over 8: two blocks of
// filters, the second shorter).
std::vector<ConvRow> few_channel_rows() {
  std::vector<ConvRow> rows;
  for (const ConvRow& row : conv_rows()) {
    if (FewChannelConv2DKernel::handles(row.geometry(2, 9), !row.first_layer)) rows.push_back(row);
  }
  rows.push_back({3, 1, Padding::same, 2, 5, true, Activation::relu});
  rows.push_back({5, 1, Padding::valid, 4, 11, true, Activation::sigmoid});
  rows.push_back({3, 1, Padding::same, 3, 1, true, Activation::tanh});
  return rows;
}
// (batch, size): 9x9 images (one part of a vector per output row); 28x28 (a whole vector and
// a part), 30 of them: groups of 13 images (the activation's, 256 KiB of 1 -> 6 outputs) and
// a last one of 4.
constexpr std::pair<int64_t, int64_t> few_channel_shapes[] = {{2, 9}, {30, 28}};

TEST_F(OpTable, FewChannelConv2DMatchesReference) {
  int checked = 0;
  for (const ConvRow& row : few_channel_rows()) {
    for (const auto& [batch, size] : few_channel_shapes) {
      SCOPED_TRACE(row.name() + " " + std::to_string(batch) + "x" + std::to_string(size) + "x" + std::to_string(size));
      check_conv_against_reference(row, size, [&](const WindowGeometry& g, const onednn::OnednnWeightLayout& layout) {
        return FewChannelConv2DKernel(g, row.activation, true, layout.native_desc(), true);
      }, batch);
    }
    ++checked;
  }
  EXPECT_GE(checked, 12);  // 1->6 and 3->16 for each kernel size and padding, and the odd counts
  // Without a bias: the reference's with a zero one.
  const ConvRow row{5, 1, Padding::same, 1, 6, true, Activation::linear};
  const WindowGeometry g = row.geometry(2, 28);
  auto x = to_floats(random_values(size_t(2 * 28 * 28), 5));
  auto kernel = to_floats(random_values(size_t(5 * 5 * 6), 6));
  std::vector<float> zero_bias(6, 0.0f), expected(size_t(2 * 28 * 28 * 6)), y(expected.size());
  reference::conv2d_forward<float>(g, x.data(), kernel.data(), zero_bias.data(), expected.data());
  onednn::OnednnWeightLayout layout = conv_layout(g);
  FewChannelConv2DKernel conv(g, row.activation, false, layout.native_desc(), false);
  auto native_kernel = to_native(layout, kernel);
  conv.forward(x.data(), native_kernel.data(), nullptr, y.data());
  EXPECT_TRUE(all_close(y, as_doubles(expected), rtol, sum_atol(25)));
}

// ---- Dense: the sizes of the zoo's models, first layer or not, fused activations.

struct DenseRow {
  int64_t in, units;
  bool first_layer;
  Activation activation;
  std::string name() const {
    return "Dense " + std::to_string(in) + "->" + std::to_string(units) +
           (first_layer ? " first" : "") + " " + activation_name(activation);
  }
};

class DenseRows : public OpTable, public ::testing::WithParamInterface<DenseRow> {};

TEST_P(DenseRows, MatchesReferenceAndRunsNoReferenceKernel) {
  const DenseRow& row = GetParam();
  const int64_t rows = 5;
  auto x = to_floats(random_values(size_t(rows * row.in), 1));
  auto kernel = to_floats(random_values(size_t(row.in * row.units), 2, -0.1, 0.1));
  auto bias = to_floats(random_values(size_t(row.units), 3));
  auto upstream = to_floats(random_values(size_t(rows * row.units), 4));
  size_t out_count = size_t(rows * row.units);
  std::vector<float> pre(out_count), expected_y(out_count), expected_dpre(out_count);
  std::vector<float> expected_dx(x.size()), expected_dkernel(kernel.size()), expected_dbias(bias.size());
  reference::dense_forward<float>(rows, row.in, row.units, x.data(), kernel.data(), bias.data(), pre.data());
  reference::activation_forward<float>(row.activation, 1, int64_t(out_count), pre.data(), expected_y.data());
  reference::activation_backward<float>(row.activation, 1, int64_t(out_count), pre.data(),
                                        expected_y.data(), upstream.data(), expected_dpre.data());
  reference::dense_backward<float>(rows, row.in, row.units, x.data(), kernel.data(),
                                   expected_dpre.data(), expected_dx.data(),
                                   expected_dkernel.data(), expected_dbias.data());

  // Both row layouts the float32 products may read, whichever the timing would pick here.
  using RowPadding = onednn::DenseKernel::RowPadding;
  for (RowPadding padding : {RowPadding::none, RowPadding::padded}) {
    SCOPED_TRACE(padding == RowPadding::none ? "rows as stored" : "rows padded");
    onednn::DenseKernel dense(rows, row.in, row.units, row.activation, true, !row.first_layer, DType::float32,
                              padding);
    std::vector<float> y(out_count), dx(x.size()), dkernel(kernel.size()), dbias(bias.size());
    dense.forward(x.data(), kernel.data(), bias.data(), y.data());
    EXPECT_TRUE(all_close(y, as_doubles(expected_y), rtol, sum_atol(row.in))) << "forward";
    std::vector<float> dy = upstream;
    dense.backward(x.data(), y.data(), dy.data(), kernel.data(), row.first_layer ? nullptr : dx.data(),
                   dkernel.data(), dbias.data());
    if (!row.first_layer) {
      EXPECT_TRUE(all_close(dx, as_doubles(expected_dx), rtol, sum_atol(row.units))) << "dx";
    }
    EXPECT_TRUE(all_close(dkernel, as_doubles(expected_dkernel), rtol, 1e-4)) << "dkernel";
    EXPECT_TRUE(all_close(dbias, as_doubles(expected_dbias), rtol, 1e-4)) << "dbias";
  }

  for (int64_t batch : training_batches) {
    onednn::DenseKernel at_batch(batch, row.in, row.units, row.activation, true, !row.first_layer);
    if (batch == layout_batch) print_row(row.name(), at_batch.implementations());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, DenseRows,
    ::testing::Values(DenseRow{784, 512, true, Activation::relu},
                      DenseRow{512, 256, false, Activation::relu},
                      DenseRow{256, 10, false, Activation::linear},
                      DenseRow{5408, 128, false, Activation::relu},
                      DenseRow{3136, 1024, false, Activation::relu},
                      DenseRow{1024, 10, false, Activation::linear},
                      DenseRow{4096, 256, false, Activation::sigmoid},
                      DenseRow{300, 20, false, Activation::tanh},
                      DenseRow{13, 64, true, Activation::relu},
                      DenseRow{64, 1, false, Activation::sigmoid}));

// ---- Pooling: max and average, sizes, strides (overlapping, tiling, with gaps), padding.

struct PoolRow {
  reference::PoolKind kind;
  int64_t pool, stride;
  Padding padding;
  std::string name() const {
    return std::string(kind == reference::PoolKind::max ? "MaxPooling2D" : "AveragePooling2D") +
           " pool" + std::to_string(pool) + " s" + std::to_string(stride) + " " +
           padding_name(padding);
  }
};

std::vector<PoolRow> pool_rows() {
  std::vector<PoolRow> rows;
  for (auto kind : {reference::PoolKind::max, reference::PoolKind::average})
    for (int64_t pool : {2, 3})
      for (int64_t stride : {1, 2, 3})
        for (Padding padding : {Padding::valid, Padding::same}) rows.push_back({kind, pool, stride, padding});
  return rows;
}

class PoolingRows : public OpTable, public ::testing::WithParamInterface<PoolRow> {};

TEST_P(PoolingRows, MatchesReferenceAndRunsNoReferenceKernel) {
  const PoolRow& row = GetParam();
  // 5 channels, and 21: tiling max pooling takes 16 at a time in vectors, then the rest.
  for (int64_t channels : {5, 21}) {
    SCOPED_TRACE(std::to_string(channels) + " channels");
    WindowGeometry g = make_window_geometry(3, 9, 8, channels, channels, row.pool, row.pool,
                                            row.stride, row.stride, row.padding);
    size_t out_count = size_t(g.batch * g.out_height * g.out_width * g.in_channels);
    auto x = to_floats(random_values(size_t(3 * 9 * 8 * channels), 1));
    auto upstream = to_floats(random_values(out_count, 2));
    std::vector<float> expected_y(out_count), expected_dx(x.size()), y(out_count), dx(x.size());
    reference::pool_forward<float>(row.kind, g, x.data(), expected_y.data());
    reference::pool_backward<float>(row.kind, g, x.data(), upstream.data(), expected_dx.data());
    onednn::PoolingKernel pool(row.kind, g);
    std::vector<std::byte> workspace(pool.workspace_bytes());
    pool.forward(x.data(), y.data(), workspace.data());
    pool.backward(upstream.data(), dx.data(), workspace.data());
    EXPECT_TRUE(all_close(y, as_doubles(expected_y), rtol, atol)) << "forward";
    EXPECT_TRUE(all_close(dx, as_doubles(expected_dx), rtol, atol)) << "backward";
  }

  for (int64_t batch : training_batches) {
    onednn::PoolingKernel at_batch(row.kind, make_window_geometry(batch, 28, 28, 32, 32, row.pool,
                                                                  row.pool, row.stride, row.stride,
                                                                  row.padding));
    if (batch == layout_batch) print_row(row.name() + " 28x28x32", at_batch.implementations());
  }
}

INSTANTIATE_TEST_SUITE_P(Table, PoolingRows, ::testing::ValuesIn(pool_rows()));

// ---- Activations, standalone (fused ones are in the Conv2D and Dense rows).

class ActivationRows : public OpTable, public ::testing::WithParamInterface<std::string> {};

TEST_P(ActivationRows, MatchesReferenceAndRunsNoReferenceKernel) {
  const Activation activation = parse_activation(GetParam());
  const int64_t rows = 7, columns = 10;
  auto x = to_floats(random_values(size_t(rows * columns), 1, -4, 4));
  auto upstream = to_floats(random_values(x.size(), 2));
  std::vector<float> expected_y(x.size()), expected_dx(x.size()), y(x.size()), dx(x.size());
  reference::activation_forward<float>(activation, rows, columns, x.data(), expected_y.data());
  reference::activation_backward<float>(activation, rows, columns, x.data(), expected_y.data(),
                                        upstream.data(), expected_dx.data());
  onednn::ActivationKernel kernel(activation, rows, columns);
  kernel.forward(x.data(), y.data());
  kernel.backward(x.data(), y.data(), upstream.data(), dx.data());
  EXPECT_TRUE(all_close(y, as_doubles(expected_y), rtol, atol)) << "forward";
  EXPECT_TRUE(all_close(dx, as_doubles(expected_dx), rtol, atol)) << "backward";
  onednn::ActivationKernel at_batch(activation, layout_batch, 10);
  print_row("Activation " + activation_name(activation) + " 256x10", at_batch.implementations());
}

INSTANTIATE_TEST_SUITE_P(Table, ActivationRows,
                         ::testing::Values("linear", "relu", "relu6", "leaky_relu", "elu", "selu",
                                           "gelu", "silu", "mish", "softplus", "softsign",
                                           "sigmoid", "hard_sigmoid", "hard_silu", "tanh",
                                           "exponential", "softmax", "log_softmax"));

// A Conv2D's or Dense's activation runs after the kernel instead of as its post-op only for
// tanh in float32, and only where the timing says oneDNN's is slow (both forms are rows above:
// the fused tanh in the Conv2D and Dense rows, ActivationKernel's here).
TEST_F(OpTable, OnlyFloat32TanhMayRunAfterTheKernelInsteadOfAsPostOp) {
  for (const char* name : {"linear", "relu", "relu6", "leaky_relu", "elu", "sigmoid", "exponential"}) {
    EXPECT_FALSE(onednn::runs_faster_after_kernel(parse_activation(name), DType::float32)) << name;
  }
  EXPECT_FALSE(onednn::runs_faster_after_kernel(Activation::tanh, DType::bfloat16));
  const bool after = onednn::runs_faster_after_kernel(Activation::tanh, DType::float32);
  EXPECT_EQ(onednn::runs_faster_after_kernel(Activation::tanh, DType::float32), after) << "decided once per process";
  print_row("Conv2D/Dense tanh", {after ? "after the kernel (tenfold:rational_tanh)" : "as the kernel's post-op"});
}

// ---- bfloat16 (the mixed_bfloat16 policy): every Conv2D row, every Dense row, the pooling
// rows (and tiling max pooling from float32 into bfloat16, as the fused Conv2D+MaxPooling2D of
// a short reduction runs it: layers/fusion.cpp), each at the training shapes with no reference kernel, and checked
// against the reference kernel run in float32 on the same bfloat16-rounded operands, its
// pre-activation rounded as the kernels round theirs (so both see relu6's kink at the same
// place). The kernels accumulate in float32 and round their outputs to bfloat16 (2^-9
// relative): within 2^-6 relative, and an absolute 2^-8 per square root of the terms summed.

std::vector<float> rounded(std::vector<float> values) {
  round_to_bfloat16(values.data(), values.data(), int64_t(values.size()));
  return values;
}

std::vector<bfloat16> to_bfloat16s(const std::vector<float>& values) {
  std::vector<bfloat16> result(values.size());
  to_bfloat16(values.data(), result.data(), int64_t(values.size()));
  return result;
}

std::vector<float> widened(const std::vector<bfloat16>& values) {
  std::vector<float> result(values.size());
  to_float(values.data(), result.data(), int64_t(values.size()));
  return result;
}

constexpr double bfloat16_rtol = 1.0 / 64;
double bfloat16_atol(int64_t terms) { return std::sqrt(double(terms)) / 256; }

class Bfloat16Conv2DRows : public OpTable, public ::testing::WithParamInterface<ConvRow> {};

/// A row's bfloat16 kernel made by `make_kernel(g, layout)` against the reference run in
/// float32 on the same bfloat16-rounded operands.
template <typename MakeKernel>
void check_bfloat16_conv_against_reference(const ConvRow& row, const WindowGeometry& g, MakeKernel make_kernel) {
  const size_t out_count = size_t(g.batch * g.out_height * g.out_width * g.out_channels);
  const int64_t group_channels = row.channels / row.groups;
  auto x = rounded(to_floats(random_values(size_t(g.batch * g.in_height * g.in_width * row.channels), 1)));
  auto kernel = rounded(to_floats(random_values(size_t(row.kernel * row.kernel * group_channels * row.filters), 2)));
  auto bias = to_floats(random_values(size_t(row.filters), 3));
  auto upstream = rounded(to_floats(random_values(out_count, 4)));
  const ConvReference expected = reference_conv(row, g, x, kernel, bias, upstream, true);

  onednn::OnednnWeightLayout layout = conv_layout(g);
  auto native_kernel = to_native(layout, kernel);
  const int64_t window = row.kernel * row.kernel, pixels = g.batch * g.out_height * g.out_width;
  auto conv = make_kernel(g, layout);
  std::vector<bfloat16> x16 = to_bfloat16s(x), y16(out_count), dy16 = to_bfloat16s(upstream), dx16(x.size());
  std::vector<float> dnative(native_kernel.size()), dbias(bias.size());
  conv.forward(x16.data(), native_kernel.data(), bias.data(), y16.data());
  EXPECT_TRUE(all_close(widened(y16), as_doubles(expected.y), bfloat16_rtol, bfloat16_atol(window * group_channels)))
      << "forward";
  conv.backward(x16.data(), y16.data(), dy16.data(), native_kernel.data(), row.first_layer ? nullptr : dx16.data(),
                dnative.data(), dbias.data());
  if (!row.first_layer) {
    EXPECT_TRUE(all_close(widened(dx16), as_doubles(expected.dx), bfloat16_rtol,
                          bfloat16_atol(window * row.filters / row.groups))) << "dx";
  }
  EXPECT_TRUE(all_close(to_keras(layout, dnative, kernel.size()), as_doubles(expected.dkernel), bfloat16_rtol,
                        bfloat16_atol(pixels))) << "dkernel";
  EXPECT_TRUE(all_close(dbias, as_doubles(expected.dbias), bfloat16_rtol, bfloat16_atol(pixels))) << "dbias";
}

TEST_P(Bfloat16Conv2DRows, MatchesReferenceAndRunsNoReferenceKernel) {
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 runs float32 kernels";
  const ConvRow& row = GetParam();
  const WindowGeometry small = row.geometry(2, 9);
  // A first layer over few channels: its weight gradients both ways (the kernel picks the
  // faster at compile).
  using Gradients = onednn::Conv2DKernel::WeightGradients;
  const bool either = row.first_layer && reduction_size(small) < 64;
  for (Gradients gradients : either ? std::vector<Gradients>{Gradients::bfloat16, Gradients::float32}
                                    : std::vector<Gradients>{Gradients::fastest}) {
    SCOPED_TRACE(gradients == Gradients::float32 ? "float32 weight gradients" : "");
    check_bfloat16_conv_against_reference(row, small, [&](const WindowGeometry& g, const onednn::OnednnWeightLayout& layout) {
      onednn::Conv2DKernel conv(g, row.activation, true, layout.native_desc(), !row.first_layer, DType::bfloat16,
                                false, gradients);
      EXPECT_EQ(conv.implementations().back().ends_with("(float32)"), gradients == Gradients::float32);
      return conv;
    });
  }

  const int64_t size = row.first_layer ? 28 : 14;
  for (int64_t batch : training_batches) {
    WindowGeometry at = row.geometry(batch, size);
    onednn::OnednnWeightLayout at_layout = conv_layout(at);
    onednn::Conv2DKernel at_batch(at, row.activation, true, at_layout.native_desc(), !row.first_layer,
                                  DType::bfloat16);
    if (batch == layout_batch) {
      print_row("bfloat16 " + row.name() + " " + std::to_string(size) + "x" + std::to_string(size),
                at_batch.implementations());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Table, Bfloat16Conv2DRows, ::testing::ValuesIn(conv_rows()));

TEST_F(OpTable, Conv2DWeightGradientsAsMatmulsMatchReference) {
  // MatmulWeightGradients (conv2d.cpp takes it where faster), forced, in float32 and bfloat16:
  // a pointwise convolution reading its rows in place, windows copied with padding, strides,
  // dilation, 5x5 and a first layer; 6 images of 14x14 pixels of 288 float32 values split into
  // chunks of 910 pixels (1 MiB) and a last of 266, the first ending inside an image.
  using Gradients = onednn::Conv2DKernel::WeightGradients;
  struct Case {
    ConvRow row;
    int64_t size = 9, batch = 2;
  };
  const Case cases[] = {{{1, 1, Padding::valid, 16, 16, false, Activation::relu}},
                        {{1, 1, Padding::same, 32, 64, false, Activation::linear}},
                        {{1, 2, Padding::valid, 24, 40, false, parse_activation("relu6")}},
                        {{3, 2, Padding::same, 32, 64, false, Activation::relu}},
                        {{5, 1, Padding::valid, 6, 16, false, Activation::tanh}},
                        {{3, 1, Padding::same, 3, 5, true, Activation::relu}},
                        {{3, 1, Padding::same, 16, 32, false, Activation::relu, 2}},
                        {{3, 1, Padding::same, 32, 16, false, Activation::relu}, 14, 6}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.row.name() + " batch " + std::to_string(c.batch));
    auto make = [&](DType dtype) {
      return [&, dtype](const WindowGeometry& g, const onednn::OnednnWeightLayout& layout) {
        onednn::Conv2DKernel conv(g, c.row.activation, true, layout.native_desc(), !c.row.first_layer, dtype, false,
                                  Gradients::matmul);
        EXPECT_TRUE(conv.implementations().back().starts_with("backward-weights matmul"));
        return conv;
      };
    };
    check_conv_against_reference(c.row, c.size, make(DType::float32), c.batch);
    if (cpu_has_bfloat16_units()) {
      check_bfloat16_conv_against_reference(c.row, c.row.geometry(c.batch, c.size), make(DType::bfloat16));
    }
  }
}

TEST_F(OpTable, Bfloat16FewChannelConv2DMatchesReference) {
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 runs float32 kernels";
  int checked = 0;
  for (const ConvRow& row : few_channel_rows()) {
    for (const auto& [batch, size] : few_channel_shapes) {
      SCOPED_TRACE(row.name() + " " + std::to_string(batch) + "x" + std::to_string(size) + "x" + std::to_string(size));
      check_bfloat16_conv_against_reference(row, row.geometry(batch, size), [&](const WindowGeometry& g, const onednn::OnednnWeightLayout& layout) {
        return FewChannelConv2DKernel(g, row.activation, true, layout.native_desc(), true, DType::bfloat16);
      });
    }
    ++checked;
  }
  EXPECT_GE(checked, 12);
}

// ---- A first layer's Conv2D direct (DirectConv2DKernel): few channels into whole vectors of
// filters, strides 1 and 2, sizes whose rows end in a partial unit of 4 pixels.

std::vector<ConvRow> direct_conv_rows() {
  std::vector<ConvRow> rows;
  for (const ConvRow& row : conv_rows()) {
    if (DirectConv2DKernel::handles(row.geometry(2, 9), row.activation, !row.first_layer)) rows.push_back(row);
  }
  rows.push_back({3, 2, Padding::same, 1, 32, true, Activation::relu});  // strided_avgpool's first layer
  rows.push_back({3, 1, Padding::same, 1, 48, true, Activation::linear});  // two vectors of filters, then one
  rows.push_back({1, 1, Padding::valid, 4, 32, true, Activation::relu});
  return rows;
}

TEST_F(OpTable, DirectConv2DMatchesReference) {
  int checked = 0;
  for (const ConvRow& row : direct_conv_rows()) {
    for (const auto& [batch, size] : few_channel_shapes) {
      SCOPED_TRACE(row.name() + " " + std::to_string(batch) + "x" + std::to_string(size) + "x" + std::to_string(size));
      check_conv_against_reference(row, size, [&](const WindowGeometry& g, const onednn::OnednnWeightLayout& layout) {
        return DirectConv2DKernel(g, row.activation, true, layout.native_desc(), true, DType::float32, DType::float32);
      }, batch);
    }
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

TEST_F(OpTable, Bfloat16DirectConv2DMatchesReference) {
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 runs float32 kernels";
  for (const ConvRow& row : direct_conv_rows()) {
    for (const auto& [batch, size] : few_channel_shapes) {
      SCOPED_TRACE(row.name() + " " + std::to_string(batch) + "x" + std::to_string(size) + "x" + std::to_string(size));
      check_bfloat16_conv_against_reference(row, row.geometry(batch, size), [&](const WindowGeometry& g, const onednn::OnednnWeightLayout& layout) {
        return DirectConv2DKernel(g, row.activation, true, layout.native_desc(), true, DType::bfloat16, DType::bfloat16);
      });
    }
  }
}

// ---- The same with a 2x2 max pooling in one pass, against the reference's convolution,
// activation and pooling.

struct ConvMaxPoolRow {
  ConvRow conv;
  int64_t size;  // odd sizes leave a row and a column of the convolution output outside the windows
};

const ConvMaxPoolRow conv_max_pool_rows[] = {
    {{3, 1, Padding::valid, 1, 32, true, Activation::relu}, 28},  // the recipe's
    {{3, 1, Padding::same, 1, 32, true, Activation::relu}, 9},
    {{3, 1, Padding::same, 1, 48, true, Activation::linear}, 12},  // two vectors of filters, then one
    {{3, 1, Padding::valid, 1, 16, true, Activation::relu}, 11},
    {{1, 1, Padding::valid, 2, 64, true, Activation::relu}, 8},
    {{3, 2, Padding::same, 1, 32, true, Activation::relu}, 28},  // strides 2: 14x14 pooled to 7x7
};

WindowGeometry pooling_2x2(const WindowGeometry& conv) {
  return make_window_geometry(conv.batch, conv.out_height, conv.out_width, conv.out_channels, conv.out_channels, 2, 2,
                              2, 2, Padding::valid, 1, 1, 1);
}

/// The reference's pooled output and gradients (dx left empty), the pre-activation rounded to
/// bfloat16 when `round_pre_activation`.
ConvReference reference_conv_max_pool(const ConvRow& row, const WindowGeometry& conv, const std::vector<float>& x,
                                      const std::vector<float>& kernel, const std::vector<float>& bias,
                                      const std::vector<float>& upstream, bool round_pre_activation) {
  const WindowGeometry pool = pooling_2x2(conv);
  const size_t conv_count = size_t(conv.batch * conv.out_height * conv.out_width * conv.out_channels);
  std::vector<float> pre(conv_count), activated(conv_count), dactivated(conv_count), dpre(conv_count);
  ConvReference expected{std::vector<float>(upstream.size()), {}, std::vector<float>(kernel.size()),
                         std::vector<float>(bias.size())};
  reference::conv2d_forward<float>(conv, x.data(), kernel.data(), bias.data(), pre.data());
  if (round_pre_activation) pre = rounded(pre);
  reference::activation_forward<float>(row.activation, 1, int64_t(conv_count), pre.data(), activated.data());
  reference::pool_forward<float>(reference::PoolKind::max, pool, activated.data(), expected.y.data());
  reference::pool_backward<float>(reference::PoolKind::max, pool, activated.data(), upstream.data(), dactivated.data());
  reference::activation_backward<float>(row.activation, 1, int64_t(conv_count), pre.data(), activated.data(),
                                        dactivated.data(), dpre.data());
  reference::conv2d_backward<float>(conv, x.data(), kernel.data(), dpre.data(), nullptr, expected.dkernel.data(),
                                    expected.dbias.data());
  return expected;
}

/// Batches of 2 and 5 images (threads then share the images unevenly), in `dtype`.
void check_conv_max_pool_rows(DType dtype) {
  const bool in_bfloat16 = dtype == DType::bfloat16;
  for (const ConvMaxPoolRow& row : conv_max_pool_rows) {
    for (int64_t batch : {2, 5}) {
      SCOPED_TRACE(row.conv.name() + " + MaxPooling2D " + std::to_string(batch) + "x" + std::to_string(row.size));
      const WindowGeometry conv = row.conv.geometry(batch, row.size), pool = pooling_2x2(conv);
      ASSERT_TRUE(DirectConv2DKernel::handles(conv, pool, row.conv.activation, false));
      const size_t out_count = size_t(batch * pool.out_height * pool.out_width * pool.out_channels);
      const int64_t taps = row.conv.kernel * row.conv.kernel * row.conv.channels;
      auto values = [&](size_t count, uint64_t seed) {
        auto floats = to_floats(random_values(count, seed));
        return in_bfloat16 ? rounded(floats) : floats;
      };
      auto x = values(size_t(batch * row.size * row.size * row.conv.channels), 1);
      auto kernel = values(size_t(taps * row.conv.filters), 2);
      auto bias = to_floats(random_values(size_t(row.conv.filters), 3));
      auto upstream = values(out_count, 4);
      const ConvReference expected = reference_conv_max_pool(row.conv, conv, x, kernel, bias, upstream, in_bfloat16);

      onednn::OnednnWeightLayout layout = conv_layout(conv);
      auto native_kernel = to_native(layout, kernel);
      // A bfloat16 model's fused step reads float32 inputs rounded to bfloat16 here (a
      // reduction below 64: layers/fusion.cpp's conv_dtype).
      const void* input = x.data();
      DirectConv2DKernel conv_max_pool(conv, row.conv.activation, true, layout.native_desc(), true, DType::float32,
                                        dtype, pool);
      std::vector<uint8_t> argmax(out_count);
      std::vector<float> y(out_count), dy = upstream, dnative(native_kernel.size()), dbias(bias.size());
      std::vector<bfloat16> y16(out_count), dy16 = to_bfloat16s(upstream);
      void* output = in_bfloat16 ? static_cast<void*>(y16.data()) : y.data();
      conv_max_pool.forward(input, native_kernel.data(), bias.data(), output, argmax.data());
      if (in_bfloat16) y = widened(y16);
      const int64_t pixels = batch * conv.out_height * conv.out_width;
      EXPECT_TRUE(all_close(y, as_doubles(expected.y), in_bfloat16 ? bfloat16_rtol : rtol,
                            in_bfloat16 ? bfloat16_atol(taps) : sum_atol(taps))) << "forward";
      conv_max_pool.backward(input, output, in_bfloat16 ? static_cast<void*>(dy16.data()) : dy.data(), nullptr,
                             nullptr, dnative.data(), dbias.data(), argmax.data());
      const double gradient_rtol = in_bfloat16 ? bfloat16_rtol : rtol;
      const double gradient_atol = in_bfloat16 ? bfloat16_atol(pixels) : std::max(1e-4, sum_atol(pixels));
      EXPECT_TRUE(all_close(to_keras(layout, dnative, kernel.size()), as_doubles(expected.dkernel), gradient_rtol,
                            gradient_atol)) << "dkernel";
      EXPECT_TRUE(all_close(dbias, as_doubles(expected.dbias), gradient_rtol, gradient_atol)) << "dbias";
    }
  }
}

TEST_F(OpTable, ConvMaxPoolMatchesReference) { check_conv_max_pool_rows(DType::float32); }

TEST_F(OpTable, Bfloat16ConvMaxPoolMatchesReference) {
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 runs float32 kernels";
  check_conv_max_pool_rows(DType::bfloat16);
}

// What it does not take: the chunked fused step (layers/fusion.cpp) runs those.
TEST_F(OpTable, DirectConv2DTakesFirstLayersOfWholeFilterVectorsOnly) {
  const ConvRow recipe{3, 1, Padding::valid, 1, 32, true, Activation::relu};
  const WindowGeometry conv = recipe.geometry(4, 28), pool = pooling_2x2(conv);
  EXPECT_TRUE(DirectConv2DKernel::handles(conv, pool, Activation::relu, false));
  EXPECT_FALSE(DirectConv2DKernel::handles(conv, pool, Activation::relu, true));  // an input gradient
  EXPECT_FALSE(DirectConv2DKernel::handles(conv, pool, Activation::tanh, false));
  EXPECT_FALSE(DirectConv2DKernel::handles(conv, pool, parse_activation("relu6"), false));
  auto other_conv = [&](ConvRow row) { return DirectConv2DKernel::handles(row.geometry(4, 28), pool, Activation::relu, false); };
  EXPECT_FALSE(other_conv({3, 1, Padding::valid, 1, 20, true, Activation::relu}));  // 20 filters
  EXPECT_FALSE(other_conv({3, 1, Padding::valid, 2, 32, true, Activation::relu}));  // 18 taps
  EXPECT_FALSE(other_conv({5, 1, Padding::valid, 1, 32, true, Activation::relu}));  // 25 taps
  EXPECT_FALSE(other_conv({3, 1, Padding::valid, 1, 32, true, Activation::relu, 2}));  // dilated
  const WindowGeometry three = make_window_geometry(4, 26, 26, 32, 32, 3, 3, 3, 3, Padding::valid, 1, 1, 1);
  EXPECT_FALSE(DirectConv2DKernel::handles(conv, three, Activation::relu, false));
  const WindowGeometry padded = make_window_geometry(4, 25, 25, 32, 32, 2, 2, 2, 2, Padding::same, 1, 1, 1);
  EXPECT_FALSE(DirectConv2DKernel::handles(recipe.geometry(4, 27), padded, Activation::relu, false));
}

class Bfloat16DenseRows : public OpTable, public ::testing::WithParamInterface<DenseRow> {};

TEST_P(Bfloat16DenseRows, MatchesReferenceAndRunsNoReferenceKernel) {
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 runs float32 kernels";
  const DenseRow& row = GetParam();
  const int64_t rows = 5;
  auto x = rounded(to_floats(random_values(size_t(rows * row.in), 1)));
  auto kernel = rounded(to_floats(random_values(size_t(row.in * row.units), 2, -0.1, 0.1)));
  auto bias = to_floats(random_values(size_t(row.units), 3));
  auto upstream = rounded(to_floats(random_values(size_t(rows * row.units), 4)));
  const size_t out_count = size_t(rows * row.units);
  std::vector<float> pre(out_count), expected_y(out_count), expected_dpre(out_count);
  std::vector<float> expected_dx(x.size()), expected_dkernel(kernel.size()), expected_dbias(bias.size());
  reference::dense_forward<float>(rows, row.in, row.units, x.data(), kernel.data(), bias.data(), pre.data());
  pre = rounded(pre);
  reference::activation_forward<float>(row.activation, 1, int64_t(out_count), pre.data(), expected_y.data());
  reference::activation_backward<float>(row.activation, 1, int64_t(out_count), pre.data(),
                                        expected_y.data(), upstream.data(), expected_dpre.data());
  reference::dense_backward<float>(rows, row.in, row.units, x.data(), kernel.data(), expected_dpre.data(),
                                   expected_dx.data(), expected_dkernel.data(), expected_dbias.data());

  onednn::DenseKernel dense(rows, row.in, row.units, row.activation, true, true, DType::bfloat16);
  std::vector<bfloat16> x16 = to_bfloat16s(x), y16(out_count), dy16 = to_bfloat16s(upstream), dx16(x.size());
  std::vector<float> dkernel(kernel.size()), dbias(bias.size());
  dense.forward(x16.data(), kernel.data(), bias.data(), y16.data());
  EXPECT_TRUE(all_close(widened(y16), as_doubles(expected_y), bfloat16_rtol, bfloat16_atol(row.in))) << "forward";
  dense.backward(x16.data(), y16.data(), dy16.data(), kernel.data(), dx16.data(), dkernel.data(), dbias.data());
  EXPECT_TRUE(all_close(widened(dx16), as_doubles(expected_dx), bfloat16_rtol, bfloat16_atol(row.units))) << "dx";
  EXPECT_TRUE(all_close(dkernel, as_doubles(expected_dkernel), bfloat16_rtol, bfloat16_atol(rows))) << "dkernel";
  EXPECT_TRUE(all_close(dbias, as_doubles(expected_dbias), bfloat16_rtol, bfloat16_atol(rows))) << "dbias";
  onednn::DenseKernel at_batch(layout_batch, row.in, row.units, row.activation, true, !row.first_layer,
                               DType::bfloat16);
  print_row("bfloat16 " + row.name(), at_batch.implementations());
}

INSTANTIATE_TEST_SUITE_P(
    Table, Bfloat16DenseRows,
    ::testing::Values(DenseRow{784, 512, true, Activation::relu}, DenseRow{512, 256, false, Activation::relu},
                      DenseRow{5408, 128, false, Activation::relu}, DenseRow{3136, 1024, false, Activation::relu},
                      DenseRow{1024, 10, false, Activation::linear}, DenseRow{4096, 256, false, Activation::sigmoid},
                      DenseRow{300, 20, false, Activation::tanh}, DenseRow{13, 64, true, Activation::relu},
                      DenseRow{64, 1, false, Activation::sigmoid}));

class Bfloat16PoolingRows : public OpTable, public ::testing::WithParamInterface<PoolRow> {};

TEST_P(Bfloat16PoolingRows, MatchesReferenceAndRunsNoReferenceKernel) {
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 runs float32 kernels";
  // Pooling only moves or averages values: in bfloat16 it equals the reference on rounded
  // values, rounded: exactly for max's forward, within a rounding or two for averages and for
  // the gradients overlapping windows add up.
  const PoolRow& row = GetParam();
  // 5 channels, and 21: the tiling kernels take 16 at a time in vectors, then the rest.
  for (int64_t channels : {5, 21}) {
    SCOPED_TRACE(std::to_string(channels) + " channels");
    WindowGeometry g = make_window_geometry(3, 9, 8, channels, channels, row.pool, row.pool, row.stride, row.stride,
                                            row.padding);
    const size_t out_count = size_t(g.batch * g.out_height * g.out_width * g.in_channels);
    // A float32 input is pooled as its bfloat16 rounding: its max is the max of the rounded
    // values, and of values equal once rounded, the first.
    const auto unrounded = to_floats(random_values(size_t(3 * 9 * 8 * channels), 1));
    auto x = rounded(unrounded);
    auto upstream = rounded(to_floats(random_values(out_count, 2)));
    std::vector<float> expected_y(out_count), expected_dx(x.size());
    reference::pool_forward<float>(row.kind, g, x.data(), expected_y.data());
    reference::pool_backward<float>(row.kind, g, x.data(), upstream.data(), expected_dx.data());
    const double forward_tolerance = row.kind == reference::PoolKind::max ? 0 : 1.0 / 128;
    // oneDNN adds overlapping windows' gradients in bfloat16: each addition rounds a partial sum
    // of up to about 2 by 2^-8.
    const double backward_atol = row.stride < row.pool ? 1.0 / 32 : 0;
    for (DType input : {DType::bfloat16, DType::float32}) {
      if (input == DType::float32 && !(row.kind == reference::PoolKind::max && row.pool == row.stride)) continue;
      SCOPED_TRACE(input == DType::float32 ? "float32 into bfloat16" : "bfloat16");
      onednn::PoolingKernel pool(row.kind, g, input, DType::bfloat16);
      std::vector<std::byte> workspace(pool.workspace_bytes());
      std::vector<bfloat16> x16 = to_bfloat16s(x), y16(out_count), dy16 = to_bfloat16s(upstream), dx16(x.size());
      std::vector<float> dx32(x.size());
      pool.forward(input == DType::float32 ? static_cast<const void*>(unrounded.data()) : x16.data(), y16.data(),
                   workspace.data());
      pool.backward(dy16.data(), input == DType::float32 ? static_cast<void*>(dx32.data()) : dx16.data(), workspace.data());
      EXPECT_TRUE(all_close(widened(y16), as_doubles(expected_y), forward_tolerance, 0)) << "forward";
      EXPECT_TRUE(all_close(input == DType::float32 ? dx32 : widened(dx16), as_doubles(expected_dx), bfloat16_rtol,
                            backward_atol)) << "backward";
    }
  }
  onednn::PoolingKernel at_batch(row.kind, make_window_geometry(layout_batch, 28, 28, 32, 32, row.pool, row.pool,
                                                                row.stride, row.stride, row.padding),
                                 DType::bfloat16);
  print_row("bfloat16 " + row.name() + " 28x28x32", at_batch.implementations());
}

INSTANTIATE_TEST_SUITE_P(Table, Bfloat16PoolingRows, ::testing::ValuesIn(pool_rows()));

TEST(Bfloat16Pooling, TilingAverageRoundsItsFloat32MeanToNearestEvenAndKeepsNaN) {
  // 2x2 windows: the mean is the float32 sum (in the reference's order) times 1/4, exact, so
  // the bfloat16 output must be that mean rounded to nearest even, to the bit, in the vector
  // lanes (21 channels: 16 + 5) and the scalar ones (each image's last pixel) alike; a NaN
  // input gives its window a NaN.
  WindowGeometry g = make_window_geometry(3, 8, 8, 21, 21, 2, 2, 2, 2, Padding::valid);
  auto x = rounded(to_floats(random_values(size_t(3 * 8 * 8 * 21), 7)));
  x[5] = std::numeric_limits<float>::quiet_NaN();  // image 0, pixel (0, 0), channel 5
  const size_t out_count = size_t(g.batch * g.out_height * g.out_width * g.in_channels);
  std::vector<float> mean(out_count);
  reference::pool_forward<float>(reference::PoolKind::average, g, x.data(), mean.data());
  onednn::PoolingKernel pool(reference::PoolKind::average, g, DType::bfloat16);
  std::vector<bfloat16> x16 = to_bfloat16s(x), y16(out_count);
  pool.forward(x16.data(), y16.data(), nullptr);
  EXPECT_TRUE(std::isnan(kernels::to_float(y16[5])));
  mean[5] = 0;
  y16[5] = kernels::to_bfloat16(0.0f);
  EXPECT_TRUE(all_close(widened(y16), as_doubles(widened(to_bfloat16s(mean))), 0, 0));
}

// ---- The check itself: a primitive forced onto oneDNN's reference kernel is refused. The
// convolution of the first bug report: backward-data handed the forward's weight layout.

TEST_F(OpTable, ReferenceKernelIsRefusedNamingLayerAndPrimitive) {
  using tag = onednn::memory::format_tag;
  onednn::memory::desc src = onednn::f32_desc({83, 32, 14, 14}, tag::nhwc);
  onednn::memory::desc dst = onednn::f32_desc({83, 64, 14, 14}, tag::nhwc);
  onednn::memory::desc weights = onednn::f32_desc({64, 32, 5, 5}, tag::Acdb32a);
  dnnl::convolution_forward::primitive_desc forward_pd(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src, weights, dst,
       {1, 1}, {2, 2}, {2, 2}},
      onednn::engine());
  dnnl::convolution_backward_data::primitive_desc pd(
      {dnnl::algorithm::convolution_direct, src, weights, dst, {1, 1}, {2, 2}, {2, 2}},
      onednn::engine(), forward_pd);
  ASSERT_TRUE(std::string(pd.impl_info_str()).starts_with("ref")) << pd.impl_info_str();

  auto bind = [&] {
    onednn::CompilingLayer naming("conv2d_1");
    onednn::BoundPrimitive(dnnl::convolution_backward_data(pd), pd,
                           {{DNNL_ARG_DIFF_DST, dst}, {DNNL_ARG_WEIGHTS, weights},
                            {DNNL_ARG_DIFF_SRC, src}});
  };
  std::string error = error_of(bind);
  EXPECT_NE(error.find("reference"), std::string::npos) << error;
  EXPECT_NE(error.find("convolution backward-data of layer 'conv2d_1'"), std::string::npos) << error;
  EXPECT_NE(error.find("src 83x32x14x14"), std::string::npos) << error;
  // The warn policy lets it run (release builds print a warning instead).
  onednn::set_reference_kernel_policy(onednn::ReferenceKernelPolicy::warn);
  EXPECT_EQ(error_of(bind), "(no error)");
}

}  // namespace
}  // namespace tenfold::kernels
