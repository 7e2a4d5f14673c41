// The fused Conv2D + MaxPooling2D step computes what the two layers compute apart: the same
// model trained once fused and once with a linear Activation between the pair (which stops the
// fusion) ends with the same weights. Batch 100 of 28x28 images with 32 filters makes the
// fused step run several full chunks and a remainder (a chunk is half an L2 cache: 12 samples
// at 2 MiB); the second pair also needs the input gradient.
#include <gtest/gtest.h>

#include <algorithm>

#include "layers/activation.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/flatten.h"
#include "layers/fusion.h"
#include "layers/input.h"
#include "layers/merge.h"
#include "layers/pooling.h"
#include "losses/crossentropy.h"
#include "models/functional.h"
#include "models/sequential.h"
#include "optimizers/sgd.h"
#include "support/check.h"

namespace tenfold {
namespace {

std::unique_ptr<models::Sequential> two_conv_blocks(bool fused) {
  set_random_seed(21);
  std::vector<std::shared_ptr<Layer>> stack = {layers::Input({28, 28, 1})};
  auto block = [&](int64_t filters, const std::string& activation, const std::string& padding) {
    stack.push_back(std::make_shared<layers::Conv2D>(layers::Conv2DOptions{
        .filters = filters, .padding = padding, .activation = activation}));
    if (!fused) stack.push_back(std::make_shared<layers::Activation>("linear"));
    stack.push_back(std::make_shared<layers::MaxPooling2D>());
  };
  block(32, "relu", "valid");
  block(16, "tanh", "same");
  stack.push_back(std::make_shared<layers::Flatten>());
  stack.push_back(std::make_shared<layers::Dense>(layers::DenseOptions{.units = 10, .activation = "softmax"}));
  auto model = std::make_unique<models::Sequential>(stack);
  model->compile(std::make_shared<optimizers::SGD>(0.1f),
                 std::make_shared<losses::SparseCategoricalCrossentropy>(), {"accuracy"});
  return model;
}

TEST(Fusion, ConvMaxPoolIsFusedOnlyForMaxPooling) {
  layers::Conv2D conv(layers::Conv2DOptions{.filters = 4, .activation = "relu"});
  layers::MaxPooling2D max_pool;
  layers::AveragePooling2D average_pool;
  Random random(1);
  conv.build({2, 10, 10, 3}, random);
  EXPECT_NE(compile_fused(conv, max_pool, {Shape{2, 10, 10, 3}}, {}), nullptr);
  EXPECT_EQ(compile_fused(conv, average_pool, {Shape{2, 10, 10, 3}}, {}), nullptr);
  EXPECT_EQ(compile_fused(max_pool, conv, {Shape{2, 10, 10, 3}}, {}), nullptr);
}

// A chunk fewer than 4 samples big does not pay: a 512x512 image with 64 filters makes
// 64 MiB of convolution output per sample.
TEST(Fusion, FeatureMapsLargerThanTheCacheRunUnfused) {
  layers::Conv2D conv(layers::Conv2DOptions{.filters = 64, .padding = "same"});
  layers::MaxPooling2D max_pool;
  Random random(1);
  conv.build({8, 512, 512, 3}, random);
  EXPECT_EQ(compile_fused(conv, max_pool, {Shape{8, 512, 512, 3}}, {}), nullptr);
  EXPECT_NE(compile_fused(conv, max_pool, {Shape{8, 16, 16, 3}}, {}), nullptr);
}

// A merge takes the Activation after it (in place on its output); Maximum and Minimum do not,
// as their backward needs their own output.
TEST(Fusion, AMergeTakesTheActivationAfterIt) {
  reset_layer_names();
  auto inputs = layers::Input({6});
  auto dense = [] { return std::make_shared<layers::Dense>(layers::DenseOptions{.units = 6}); };
  KerasTensor a = (*dense())(inputs), b = (*dense())(inputs);
  KerasTensor sum = (*std::make_shared<layers::Activation>("relu"))((*std::make_shared<layers::Add>())({a, b}));
  KerasTensor high = (*std::make_shared<layers::Activation>("tanh"))((*std::make_shared<layers::Maximum>())({a, sum}));
  models::Functional model(inputs, high);
  model.compile("sgd", "mse");
  std::vector<std::string> names = model.compiled_step(4, true).step_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "add+activation"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "maximum"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "activation_1"), names.end());
}

TEST(Fusion, FusedStepsTrainLikeSeparateLayers) {
  auto fused = two_conv_blocks(true), separate = two_conv_blocks(false);
  // The pairs did fuse: one step each, where the separate model runs every layer alone.
  auto fused_steps = [](models::Sequential& model) {
    std::vector<std::string> names = model.compiled_step(100, true).step_names();
    return std::count_if(names.begin(), names.end(),
                         [](const std::string& name) { return name.find('+') != std::string::npos; });
  };
  EXPECT_EQ(fused_steps(*fused), 2);
  EXPECT_EQ(fused->compiled_step(100, true).step_names().size(), 4u);
  EXPECT_EQ(fused_steps(*separate), 0);
  Tensor x(Shape{100, 28, 28, 1}), y(Shape{100}, DType::int32);
  auto values = testing::random_values(size_t(x.num_elements()), 8, 0, 1);
  std::copy(values.begin(), values.end(), x.data<float>());
  for (int64_t i = 0; i < 100; ++i) y.data<int32_t>()[i] = int32_t(i % 10);
  models::FitOptions options;
  options.batch_size = 100;
  options.epochs = 2;
  options.verbose = 0;
  options.shuffle = false;
  auto fused_history = fused->fit(x, y, options);
  auto separate_history = separate->fit(x, y, options);
  EXPECT_NEAR(fused_history.history.at("loss")[1], separate_history.history.at("loss")[1], 1e-5);
  std::vector<Variable*> fused_weights = fused->weights(), separate_weights = separate->weights();
  ASSERT_EQ(fused_weights.size(), separate_weights.size());
  for (size_t i = 0; i < fused_weights.size(); ++i) {
    EXPECT_TRUE(testing::all_close(fused_weights[i]->read(), separate_weights[i]->read(), 1e-4, 1e-6))
        << "weight " << i;
  }
  EXPECT_TRUE(testing::all_close(fused->predict(x), separate->predict(x), 1e-4, 1e-6));
}

}  // namespace
}  // namespace tenfold
