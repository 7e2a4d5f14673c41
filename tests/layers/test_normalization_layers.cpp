// LayerNormalization, Normalization and keras.applications' LayerScale beyond Keras parity
// (tests/models/test_keras_parity.cpp, ThreeAdamStepsOfConvNeXtLayers): gradients against
// central differences, adapt() against a two-pass mean and variance, refusals. Also PReLU's
// gradients (a learned, per-channel scale as well).
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "core/random.h"
#include "data/dataset.h"
#include "kernels/bfloat16.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/flatten.h"
#include "layers/input.h"
#include "layers/layer_normalization.h"
#include "layers/layer_scale.h"
#include "layers/normalization.h"
#include "layers/prelu.h"
#include "losses/crossentropy.h"
#include "models/sequential.h"
#include "optimizers/sgd.h"
#include "support/check.h"
#include "support/layer_test.h"

namespace tenfold {
namespace {

using testing::random_labels;
using testing::random_tensor;

TEST(LayerNormalization, GradientsMatchFiniteDifferences) {
  // Conv2D -> LayerNormalization -> LayerScale -> Flatten -> softmax Dense: the convolution's
  // gradients pass through the normalization's input gradient, gamma and beta are away from
  // 1 and 0, LayerScale's scales from its init_values.
  set_random_seed(4);
  auto normalization = std::make_shared<layers::LayerNormalization>(layers::LayerNormalizationOptions{.epsilon = 1e-3});
  auto scale = std::make_shared<layers::LayerScale>(0.5, 3);
  models::Sequential model({layers::Input(Shape{4, 4, 2}),
                            std::make_shared<layers::Conv2D>(layers::Conv2DOptions{.filters = 3, .kernel_size = {3, 3},
                                                                                   .padding = "same"}),
                            normalization, scale, std::make_shared<layers::Flatten>(),
                            std::make_shared<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "softmax"})});
  for (Variable* weight : normalization->weights()) weight->assign(random_tensor(weight->shape(), 11, 0.5, 1.5));
  for (Variable* weight : scale->weights()) weight->assign(random_tensor(weight->shape(), 12, 0.5, 1.5));
  model.compile(std::make_shared<optimizers::SGD>(0.1f), std::make_shared<losses::SparseCategoricalCrossentropy>());
  const int64_t batch = 5;
  models::CompiledStep& step = model.compiled_step(batch, true);
  Tensor x = random_tensor({batch, 4, 4, 2}, 1);
  std::memcpy(step.input().raw_data(), x.raw_data(), x.num_bytes());
  Tensor y = random_labels(batch, 4, 3);
  losses::SparseCategoricalCrossentropy loss;
  step.forward(true);
  step.backward(loss, y, double(batch));
  std::vector<Variable*> weights = model.trainable_weights();
  ASSERT_EQ(weights.size(), 7u);  // conv kernel, bias; gamma, beta; scale; dense kernel, bias
  testing::expect_weight_gradients_match_finite_differences(step, weights, loss, y, true, 1e-3);
}

TEST(LayerNormalization, NormalisesTheLastAxisOnly) {
  layers::LayerNormalization last(layers::LayerNormalizationOptions{.axis = 2});
  EXPECT_NO_THROW(last.build(Shape{2, 3, 4}, global_random()));
  layers::LayerNormalization middle(layers::LayerNormalizationOptions{.axis = 1});
  EXPECT_THROW(middle.build(Shape{2, 3, 4}, global_random()), Error);
}

TEST(PReLU, GradientsMatchFiniteDifferences) {
  // One alpha per channel (shared_axes [1, 2]) before the Dense, one per element after it.
  set_random_seed(7);
  auto per_channel = std::make_shared<layers::PReLU>(Initializer("zeros"), std::vector<int64_t>{1, 2});
  auto per_element = std::make_shared<layers::PReLU>();
  models::Sequential model({layers::Input(Shape{3, 3, 2}),
                            std::make_shared<layers::Conv2D>(layers::Conv2DOptions{.filters = 3, .kernel_size = {3, 3},
                                                                                   .padding = "same"}),
                            per_channel, std::make_shared<layers::Flatten>(),
                            std::make_shared<layers::Dense>(layers::DenseOptions{.units = 5}), per_element,
                            std::make_shared<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "softmax"})});
  EXPECT_EQ(per_channel->weights()[0]->shape(), Shape({1, 1, 3}));
  EXPECT_EQ(per_element->weights()[0]->shape(), Shape({5}));
  per_channel->weights()[0]->assign(random_tensor(Shape{1, 1, 3}, 13, 0.1, 0.5));
  per_element->weights()[0]->assign(random_tensor(Shape{5}, 14, 0.1, 0.5));
  testing::expect_model_gradients_match_finite_differences(model, 6, 4);
}

/// The per-channel mean and biased variance of `x` ([..., channels]) in two passes.
std::pair<std::vector<double>, std::vector<double>> two_pass_statistics(const Tensor& x, int64_t channels) {
  std::vector<double> mean(static_cast<size_t>(channels)), variance(static_cast<size_t>(channels));
  const int64_t rows = x.num_elements() / channels;
  for (int64_t i = 0; i < x.num_elements(); ++i) mean[size_t(i % channels)] += x.data<float>()[i] / double(rows);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const double d = x.data<float>()[i] - mean[size_t(i % channels)];
    variance[size_t(i % channels)] += d * d / double(rows);
  }
  return {mean, variance};
}

TEST(Normalization, AdaptsToATensorOrADatasetOfBatches) {
  Tensor x = random_tensor({40, 3, 3, 2}, 21, 1.0, 5.0);
  auto [mean, variance] = two_pass_statistics(x, 2);
  layers::Normalization from_tensor;
  from_tensor.adapt(x);
  layers::Normalization from_batches;
  from_batches.adapt(data::Dataset::from_tensor_slices({x}).batch(16));  // 16, 16, 8
  for (layers::Normalization* layer : {&from_tensor, &from_batches}) {
    std::vector<Variable*> weights = layer->weights();
    ASSERT_EQ(weights.size(), 3u);  // mean, variance, count
    for (int64_t c = 0; c < 2; ++c) {
      EXPECT_NEAR(weights[0]->read().data<float>()[c], mean[size_t(c)], 1e-6 * std::abs(mean[size_t(c)]));
      EXPECT_NEAR(weights[1]->read().data<float>()[c], variance[size_t(c)], 1e-5 * variance[size_t(c)]);
    }
    EXPECT_EQ(weights[2]->read().data<float>()[0], 0.0f);  // as Keras' adapt leaves it
    EXPECT_TRUE(weights[2]->integer());
    // Adapted, it maps the data to mean 0 and variance 1.
    auto step = layer->compile(x.shape(), {});
    Tensor y(x.shape());
    step->forward(x, y, false);
    auto [normal_mean, normal_variance] = two_pass_statistics(y, 2);
    for (int64_t c = 0; c < 2; ++c) {
      EXPECT_NEAR(normal_mean[size_t(c)], 0.0, 1e-5);
      EXPECT_NEAR(normal_variance[size_t(c)], 1.0, 1e-5);
    }
  }
  // Given statistics are not adapted over.
  layers::Normalization given(layers::NormalizationOptions{.mean = {1.0}, .variance = {2.0}});
  EXPECT_THROW(given.adapt(x), Error);
}

TEST(Normalization, UnderTheBfloat16PolicyAdaptsIntoBfloat16Variables) {
  // Keras keeps the adapted mean and variance in the layer's variable dtype; the count stays
  // an integer.
  Tensor x = random_tensor({40, 3, 3, 2}, 21, 1.0, 5.0);
  auto [mean, variance] = two_pass_statistics(x, 2);
  layers::Normalization layer;
  layer.set_dtype_policy(DTypePolicy::bfloat16);
  layer.adapt(x);
  std::vector<Variable*> weights = layer.weights();
  EXPECT_EQ(weights[0]->dtype(), DType::bfloat16);
  EXPECT_EQ(weights[2]->dtype(), DType::float32);
  for (int64_t c = 0; c < 2; ++c) {
    EXPECT_EQ(weights[0]->read().data<float>()[c], kernels::to_float(kernels::to_bfloat16(float(mean[size_t(c)]))));
    EXPECT_EQ(weights[1]->read().data<float>()[c], kernels::to_float(kernels::to_bfloat16(float(variance[size_t(c)]))));
  }
}

TEST(Normalization, GivenStatisticsAndInvert) {
  Tensor x = random_tensor({4, 3}, 22);
  layers::NormalizationOptions options{.mean = {0.5, -1.0, 2.0}, .variance = {4.0, 0.25, 0.0}};
  layers::Normalization normalize(options);
  options.invert = true;
  layers::Normalization invert(options);
  normalize.build(x.shape(), global_random());
  invert.build(x.shape(), global_random());
  Tensor y(x.shape()), back(x.shape());
  normalize.compile(x.shape(), {})->forward(x, y, false);
  invert.compile(x.shape(), {})->forward(y, back, false);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t c = i % 3;
    // Keras divides by max(sqrt(variance), 1e-7): a zero variance does not divide by zero.
    const double deviation = std::max(std::sqrt(options.variance[size_t(c)]), 1e-7);
    EXPECT_NEAR(y.data<float>()[i], (x.data<float>()[i] - options.mean[size_t(c)]) / deviation,
                1e-6 * std::abs(y.data<float>()[i]) + 1e-6);
    EXPECT_NEAR(back.data<float>()[i], x.data<float>()[i], 1e-5);
  }
  layers::Normalization wrong(layers::NormalizationOptions{.mean = {0.0, 1.0}, .variance = {1.0, 1.0}});
  EXPECT_THROW(wrong.build(Shape{2, 3}, global_random()), Error);  // 2 means for 3 features
}

}  // namespace
}  // namespace tenfold
