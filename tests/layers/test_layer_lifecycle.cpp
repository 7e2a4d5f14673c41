// Every layer through the Keras lifecycle (run_layer_test), Keras' default names, and the
// behaviour that has no PyTorch counterpart to compare with (Dropout).
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/dropout.h"
#include "layers/padding.h"
#include "layers/registry.h"
#include "layers/upsampling.h"
#include "support/check.h"
#include "support/layer_test.h"

namespace tenfold {
namespace {

using nlohmann::json;
using testing::run_layer_test;

TEST(LayerLifecycle, Conv2D) {
  run_layer_test({{"class_name", "Conv2D"},
                  {"config", {{"filters", 32}, {"kernel_size", 3}, {"activation", "relu"}}}},
                 {4, 28, 28, 1}, {4, 26, 26, 32}, 320);
  run_layer_test({{"class_name", "Conv2D"},
                  {"config", {{"filters", 4}, {"kernel_size", {3, 2}}, {"strides", 2},
                              {"padding", "same"}, {"use_bias", false}}}},
                 {2, 7, 6, 3}, {2, 4, 3, 4}, 3 * 2 * 3 * 4);
}

TEST(LayerLifecycle, DilatedGroupedAndDepthwiseConvolutions) {
  run_layer_test({{"class_name", "Conv2D"},
                  {"config", {{"filters", 4}, {"kernel_size", 3}, {"dilation_rate", 2}}}},
                 {2, 9, 9, 2}, {2, 5, 5, 4}, 3 * 3 * 2 * 4 + 4);
  run_layer_test({{"class_name", "Conv2D"},
                  {"config", {{"filters", 6}, {"kernel_size", 3}, {"groups", 2}, {"padding", "same"}}}},
                 {2, 5, 5, 4}, {2, 5, 5, 6}, 3 * 3 * 2 * 6 + 6);
  run_layer_test({{"class_name", "DepthwiseConv2D"},
                  {"config", {{"kernel_size", 3}, {"depth_multiplier", 2}, {"padding", "same"}}}},
                 {2, 7, 7, 3}, {2, 7, 7, 6}, 3 * 3 * 3 * 2 + 6);
  run_layer_test({{"class_name", "Embedding"}, {"config", {{"input_dim", 7}, {"output_dim", 3}}}}, {2, 5}, {2, 5, 3}, 21);
  run_layer_test({{"class_name", "Conv2DTranspose"}, {"config", {{"filters", 4}, {"kernel_size", 2}, {"strides", 2}}}},
                 {2, 5, 5, 3}, {2, 10, 10, 4}, 2 * 2 * 4 * 3 + 4);
  run_layer_test({{"class_name", "Conv2DTranspose"},
                  {"config", {{"filters", 2}, {"kernel_size", 4}, {"strides", 2}, {"padding", "same"}, {"use_bias", false}}}},
                 {2, 5, 5, 3}, {2, 10, 10, 2}, 4 * 4 * 2 * 3);
  run_layer_test({{"class_name", "Conv1D"}, {"config", {{"filters", 4}, {"kernel_size", {3}}, {"padding", "causal"}}}},
                 {2, 10, 3}, {2, 10, 4}, 3 * 3 * 4 + 4);
  run_layer_test({{"class_name", "Conv1D"}, {"config", {{"filters", 6}, {"kernel_size", 2}, {"strides", 2}, {"groups", 3}}}},
                 {2, 9, 3}, {2, 4, 6}, 2 * 1 * 6 + 6);
  run_layer_test({{"class_name", "MaxPooling1D"}, {"config", {{"pool_size", {3}}, {"padding", "same"}}}}, {2, 10, 3},
                 {2, 4, 3}, 0);
  run_layer_test({{"class_name", "AveragePooling1D"}, {"config", {{"pool_size", 2}, {"strides", 1}}}}, {2, 10, 3},
                 {2, 9, 3}, 0);
  run_layer_test({{"class_name", "GlobalMaxPooling1D"}, {"config", {{"keepdims", true}}}}, {2, 10, 3}, {2, 1, 3}, 0);
  run_layer_test({{"class_name", "GlobalAveragePooling1D"}, {"config", json::object()}}, {2, 10, 3}, {2, 3}, 0);
  run_layer_test({{"class_name", "SeparableConv2D"},
                  {"config", {{"filters", 4}, {"kernel_size", 3}, {"depth_multiplier", 2}, {"strides", 2},
                              {"pointwise_regularizer", {{"class_name", "L2"}, {"config", {{"l2", 0.1}}}}}}}},
                 {2, 8, 8, 3}, {2, 3, 3, 4}, 3 * 3 * 3 * 2 + 6 * 4 + 4);
}

TEST(LayerLifecycle, ShapeLayers) {
  run_layer_test({{"class_name", "ZeroPadding2D"}, {"config", {{"padding", {{1, 2}, {0, 3}}}}}},
                 {2, 5, 4, 3}, {2, 8, 7, 3}, 0);
  run_layer_test({{"class_name", "ZeroPadding2D"}, {"config", json::object()}}, {2, 5, 4, 3}, {2, 7, 6, 3}, 0);
  run_layer_test({{"class_name", "Cropping2D"}, {"config", {{"cropping", {1, 2}}}}}, {2, 6, 7, 3}, {2, 4, 3, 3}, 0);
  run_layer_test({{"class_name", "UpSampling2D"}, {"config", {{"size", {2, 3}}}}}, {2, 3, 4, 2}, {2, 6, 12, 2}, 0);
  run_layer_test({{"class_name", "Rescaling"}, {"config", {{"scale", 0.5}, {"offset", -1.0}}}}, {2, 4, 4, 1},
                 {2, 4, 4, 1}, 0);
  run_layer_test({{"class_name", "Identity"}, {"config", json::object()}}, {3, 5}, {3, 5}, 0);
}

TEST(ShapeLayers, PaddingThenCroppingGivesTheInputAndUpSamplingRepeatsPixels) {
  Tensor x = testing::random_tensor({2, 3, 4, 2}, 1);
  auto padding = layers::ZeroPadding2D({{{1, 2}, {3, 0}}});
  auto cropping = layers::Cropping2D({{{1, 2}, {3, 0}}});
  Tensor padded(padding.compute_output_shape(x.shape())), back(x.shape());
  padding.compile(x.shape(), {})->forward(x, padded, true);
  cropping.compile(padded.shape(), {})->forward(padded, back, true);
  EXPECT_TRUE(testing::all_close(back, x, 0, 0));
  EXPECT_EQ(padded.data<float>()[0], 0.0f);  // the top-left corner is padding
  auto upsampling = layers::UpSampling2D({2, 2});
  Tensor up(upsampling.compute_output_shape(x.shape()));
  auto step = upsampling.compile(x.shape(), {});
  step->forward(x, up, true);
  // Output pixel (n, 2h + i, 2w + j) is input pixel (n, h, w); a gradient of ones sums to 4.
  EXPECT_EQ(up.data<float>()[((1 * 6 + 5) * 8 + 7) * 2 + 1], x.data<float>()[((1 * 3 + 2) * 4 + 3) * 2 + 1]);
  Tensor ones(up.shape()), gradient(x.shape());
  for (float& v : ones.values<float>()) v = 1;
  step->backward(x, up, ones, &gradient, {}, false);
  for (float v : gradient.values<float>()) EXPECT_EQ(v, 4.0f);
}

TEST(LayerLifecycle, BatchNormalization) {
  // gamma and beta per channel, and the moving statistics (non-trainable: counted too).
  run_layer_test({{"class_name", "BatchNormalization"}, {"config", json::object()}}, {2, 5, 5, 3},
                 {2, 5, 5, 3}, 4 * 3);
  run_layer_test({{"class_name", "BatchNormalization"},
                  {"config", {{"axis", {1}}, {"center", false}, {"momentum", 0.9}}}},
                 {4, 6}, {4, 6}, 3 * 6);
}

TEST(LayerLifecycle, Pooling) {
  run_layer_test({{"class_name", "MaxPooling2D"}, {"config", json::object()}}, {2, 26, 26, 32},
                 {2, 13, 13, 32}, 0);
  run_layer_test({{"class_name", "AveragePooling2D"},
                  {"config", {{"pool_size", 3}, {"strides", 2}, {"padding", "same"}}}},
                 {2, 7, 7, 2}, {2, 4, 4, 2}, 0);
}

TEST(LayerLifecycle, FlattenDenseActivations) {
  run_layer_test({{"class_name", "Flatten"}, {"config", json::object()}}, {3, 13, 13, 32},
                 {3, 5408}, 0);
  run_layer_test({{"class_name", "Dense"}, {"config", {{"units", 128}, {"activation", "relu"}}}},
                 {8, 5408}, {8, 128}, 692352);
  run_layer_test({{"class_name", "Dense"}, {"config", {{"units", 10}, {"activation", "softmax"}}}},
                 {8, 128}, {8, 10}, 1290);
  for (const char* activation : {"relu", "sigmoid", "tanh", "softmax", "linear"}) {
    run_layer_test({{"class_name", "Activation"}, {"config", {{"activation", activation}}}},
                   {4, 6}, {4, 6}, 0);
  }
  run_layer_test({{"class_name", "ReLU"}, {"config", json::object()}}, {4, 6}, {4, 6}, 0);
  run_layer_test({{"class_name", "Softmax"}, {"config", json::object()}}, {4, 6}, {4, 6}, 0);
  run_layer_test({{"class_name", "Dropout"}, {"config", {{"rate", 0.3}, {"seed", 3}}}}, {4, 6},
                 {4, 6}, 0);
}

TEST(LayerLifecycle, NormalizationLayers) {
  run_layer_test({{"class_name", "LayerNormalization"}, {"config", {{"epsilon", 1e-6}}}}, {2, 3, 3, 8},
                 {2, 3, 3, 8}, 16);
  run_layer_test({{"class_name", "LayerNormalization"}, {"config", {{"center", false}, {"axis", {-1}}}}},
                 {4, 6}, {4, 6}, 6);
  run_layer_test({{"class_name", "GroupNormalization"}, {"config", {{"groups", 4}}}}, {2, 3, 3, 8}, {2, 3, 3, 8}, 16);
  run_layer_test({{"class_name", "GroupNormalization"}, {"config", {{"groups", 2}, {"scale", false}}}}, {4, 6}, {4, 6}, 6);
  // Given statistics live in the config; adapted ones are weights mean, variance and count.
  run_layer_test({{"class_name", "Normalization"},
                  {"config", {{"mean", {0.5, 1.0, 2.0}}, {"variance", {1.0, 4.0, 9.0}}}}},
                 {2, 4, 4, 3}, {2, 4, 4, 3}, 0);
  run_layer_test({{"class_name", "Normalization"}, {"config", {{"axis", {3}}}}}, {2, 4, 4, 3}, {2, 4, 4, 3}, 7);
  run_layer_test({{"class_name", "Normalization"}, {"config", {{"axis", nullptr}, {"invert", true}}}}, {2, 5},
                 {2, 5}, 3);
  run_layer_test({{"class_name", "LayerScale"}, {"module", "keras.src.applications.convnext"},
                  {"config", {{"init_values", 1e-6}, {"projection_dim", 8}}}},
                 {2, 3, 3, 8}, {2, 3, 3, 8}, 8);
  run_layer_test({{"class_name", "PReLU"}, {"config", {{"shared_axes", {1, 2}}}}}, {2, 3, 3, 4}, {2, 3, 3, 4}, 4);
  run_layer_test({{"class_name", "PReLU"}, {"config", {{"alpha_initializer", "ones"}}}}, {2, 6}, {2, 6}, 6);
  run_layer_test({{"class_name", "Dropout"}, {"config", {{"rate", 0.2}, {"noise_shape", {nullptr, 1, 1, 1}}}}},
                 {4, 3, 3, 2}, {4, 3, 3, 2}, 0);
}

TEST(LayerLifecycle, DefaultsAreKeras) {
  reset_layer_names();
  layers::Conv2D conv(layers::Conv2DOptions{.filters = 8});
  layers::Conv2D second(layers::Conv2DOptions{.filters = 8});
  EXPECT_EQ(conv.name(), "conv2d");
  EXPECT_EQ(second.name(), "conv2d_1");
  json config = conv.get_config();
  EXPECT_EQ(config["kernel_size"], json({3, 3}));
  EXPECT_EQ(config["strides"], json({1, 1}));
  EXPECT_EQ(config["padding"], "valid");
  EXPECT_EQ(config["activation"], "linear");
  EXPECT_EQ(config["use_bias"], true);
  EXPECT_EQ(config["kernel_initializer"]["class_name"], "GlorotUniform");
  EXPECT_EQ(config["bias_initializer"]["class_name"], "Zeros");
}

TEST(LayerLifecycle, GlorotUniformKernelsAndZeroBiases) {
  layers::Dense dense(layers::DenseOptions{.units = 300});
  Random random(9);
  dense.build({1, 500}, random);
  Tensor kernel = dense.weights()[0]->read();
  double limit = std::sqrt(6.0 / (500 + 300)), sum_squares = 0;
  for (float value : kernel.values<float>()) {
    ASSERT_LE(std::fabs(value), limit);
    sum_squares += double(value) * value;
  }
  // Uniform(-l, l) has variance l^2 / 3.
  EXPECT_NEAR(sum_squares / double(kernel.num_elements()), limit * limit / 3, 0.02 * limit * limit);
  Tensor bias = dense.weights()[1]->read();
  for (float value : bias.values<float>()) EXPECT_EQ(value, 0.0f);
}

TEST(LayerLifecycle, BadArgumentsAreClearErrors) {
  EXPECT_THROW(layers::Conv2D(layers::Conv2DOptions{.filters = 0}), Error);
  EXPECT_THROW(layers::Conv2D(layers::Conv2DOptions{.filters = 3, .padding = "full"}), Error);
  EXPECT_THROW(layers::Dense(layers::DenseOptions{.units = 3, .activation = "celu"}), Error);
  EXPECT_THROW(layers::Dropout(1.0f), Error);
  try {
    layers::from_config({{"class_name", "Lambda"}, {"config", {{"function", "..."}}}});
    FAIL() << "Lambda must be rejected";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("'Lambda' is not supported"), std::string::npos);
  }
  layers::Conv2D conv(layers::Conv2DOptions{.filters = 3});
  Random random(1);
  EXPECT_THROW(conv.build({1, 28, 28}, random), Error);  // not NHWC
}

TEST(Dropout, DropsAtRateScalesTheRestAndPassesThroughAtInference) {
  layers::Dropout dropout(0.25f, 11);
  Shape shape{100, 100};
  auto step = dropout.compile(shape, {});
  Tensor x(shape), y(shape), dy(shape), dx(shape);
  for (float& value : x.values<float>()) value = 2.0f;
  for (float& value : dy.values<float>()) value = 1.0f;
  step->forward(x, y, true);
  int64_t dropped = 0;
  for (float value : y.values<float>()) {
    ASSERT_TRUE(value == 0.0f || std::fabs(value - 2.0f / 0.75f) < 1e-6);
    dropped += value == 0.0f;
  }
  // 10000 draws at p = 0.25: the standard deviation of the count is ~43.
  EXPECT_NEAR(double(dropped), 2500.0, 250.0);
  step->backward(x, y, dy, &dx, {}, false);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    // The output is linear in the input given the mask: dy/dx = y/x elementwise.
    EXPECT_FLOAT_EQ(dx.data<float>()[i], y.data<float>()[i] / 2.0f);
  }
  step->forward(x, y, false);
  for (float value : y.values<float>()) ASSERT_EQ(value, 2.0f);
}

TEST(Dropout, ANoiseShapeSharesOneDrawAlongItsAxesOfSizeOne) {
  // EfficientNet's noise_shape (None, 1, 1, 1): whole samples dropped or kept.
  layers::Dropout dropout(0.5f, 5, "", {std::nullopt, 1, 1, 1});
  Shape shape{64, 3, 3, 2};
  auto step = dropout.compile(shape, {});
  Tensor x(shape), y(shape), dy(shape), dx(shape);
  for (float& value : x.values<float>()) value = 1.0f;
  for (float& value : dy.values<float>()) value = 3.0f;
  step->forward(x, y, true);
  step->backward(x, y, dy, &dx, {}, false);
  const int64_t per_sample = 3 * 3 * 2;
  int64_t dropped = 0;
  for (int64_t sample = 0; sample < 64; ++sample) {
    const float first = y.data<float>()[sample * per_sample];
    ASSERT_TRUE(first == 0.0f || first == 2.0f) << first;
    for (int64_t i = 0; i < per_sample; ++i) {
      ASSERT_EQ(y.data<float>()[sample * per_sample + i], first) << "sample " << sample;
      ASSERT_EQ(dx.data<float>()[sample * per_sample + i], 3.0f * first);
    }
    dropped += first == 0.0f;
  }
  EXPECT_GT(dropped, 16);  // 64 draws at p = 0.5: a count outside (16, 48) has p < 1e-4
  EXPECT_LT(dropped, 48);
  // Sharing along the channels only: each pixel's two channels together.
  auto pixels = layers::Dropout(0.5f, 5, "", {std::nullopt, std::nullopt, std::nullopt, 1}).compile(shape, {});
  pixels->forward(x, y, true);
  for (int64_t i = 0; i < shape.num_elements(); i += 2) ASSERT_EQ(y.data<float>()[i], y.data<float>()[i + 1]);
  // A noise_shape entry that is neither the size nor 1, and one of the wrong rank, are refused.
  EXPECT_THROW(layers::Dropout(0.5f, 5, "", {std::nullopt, 2, 1, 1}).compile(shape, {}), Error);
  EXPECT_THROW(layers::Dropout(0.5f, 5, "", {std::nullopt, 1}).compile(shape, {}), Error);
}

// Masks are a function of (seed, worker, replica, batch, call): the same on a rerun whatever
// thread compiled first, different for every other replica, worker and call.
TEST(Dropout, MasksDifferAcrossReplicasWorkersAndCallsAndRepeatOnARerun) {
  layers::Dropout dropout(0.5f, 7);
  Shape shape{64, 32};
  Tensor x(shape);
  for (float& value : x.values<float>()) value = 1.0f;
  auto first_mask = [&](const CompileOptions& options, int calls) {
    auto step = dropout.compile(shape, options);
    Tensor y(shape);
    for (int call = 0; call < calls; ++call) step->forward(x, y, true);
    return std::vector<float>(y.values<float>().begin(), y.values<float>().end());
  };
  std::vector<float> mask = first_mask({}, 1);
  EXPECT_EQ(first_mask({}, 1), mask);
  EXPECT_NE(first_mask({.replica = 1}, 1), mask);
  EXPECT_NE(first_mask({.worker = 1}, 1), mask);
  EXPECT_NE(first_mask({.worker = 1, .replica = 1}, 1), first_mask({.replica = 1}, 1));
  EXPECT_NE(first_mask({}, 2), mask);
}

}  // namespace
}  // namespace tenfold
