// BatchNormalization beyond Keras parity (tests/models/test_keras_parity.cpp): gradients
// through the batch statistics against finite differences, a frozen layer normalising with
// its moving statistics and leaving them alone, and bad axes.
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/random.h"
#include "layers/batch_normalization.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/flatten.h"
#include "layers/input.h"
#include "losses/crossentropy.h"
#include "models/sequential.h"
#include "optimizers/sgd.h"
#include "support/check.h"
#include "support/layer_test.h"

namespace tenfold {
namespace {

using testing::random_labels;
using testing::random_tensor;

/// Conv2D -> BatchNormalization -> Flatten -> softmax Dense, the normalization's gamma and
/// beta away from 1 and 0.
std::unique_ptr<models::Sequential> small_model(bool trainable_normalization) {
  set_random_seed(9);
  auto normalization = std::make_shared<layers::BatchNormalization>();
  normalization->set_trainable(trainable_normalization);
  auto model = std::make_unique<models::Sequential>(std::vector<std::shared_ptr<Layer>>{
      layers::Input(Shape{5, 5, 2}),
      std::make_shared<layers::Conv2D>(layers::Conv2DOptions{.filters = 3, .kernel_size = {3, 3}, .padding = "same"}),
      normalization, std::make_shared<layers::Flatten>(),
      std::make_shared<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "softmax"})});
  for (Variable* weight : normalization->weights()) {
    weight->assign(random_tensor(weight->shape(), 11, 0.5, 1.5));
  }
  model->compile(std::make_shared<optimizers::SGD>(0.1f), std::make_shared<losses::SparseCategoricalCrossentropy>());
  return model;
}

TEST(BatchNormalization, GradientsThroughTheBatchStatisticsMatchFiniteDifferences) {
  auto model = small_model(true);
  const int64_t batch = 6;
  models::CompiledStep& step = model->compiled_step(batch, true);
  Tensor x = random_tensor({batch, 5, 5, 2}, 1);
  std::memcpy(step.input().raw_data(), x.raw_data(), x.num_bytes());
  Tensor y = random_labels(batch, 4, 3);
  losses::SparseCategoricalCrossentropy loss;
  step.forward(true);
  step.backward(loss, y, double(batch));
  std::vector<Variable*> weights = model->trainable_weights();
  ASSERT_EQ(weights.size(), 6u);  // conv kernel, bias; gamma, beta; dense kernel, bias
  // Forward in training: the batch's statistics, as the gradient assumes. The convolution's
  // bias feeds the normalization only: its gradient is zero (the mean takes it out), which
  // the absolute tolerance checks.
  testing::expect_weight_gradients_match_finite_differences(step, weights, loss, y, true, 1e-3);
}

TEST(BatchNormalization, AFrozenLayerNormalisesWithItsMovingStatisticsAndKeepsThem) {
  // Keras: trainable=False runs the layer in inference mode, even in training.
  auto model = small_model(false);
  Layer* normalization = model->layers()[1];
  std::vector<Tensor> before;
  for (Variable* weight : normalization->weights()) before.push_back(weight->read());
  Tensor x = random_tensor({8, 5, 5, 2}, 2);
  Tensor inference = model->predict(x);
  models::CompiledStep& step = model->compiled_step(8, true);
  std::memcpy(step.input().raw_data(), x.raw_data(), x.num_bytes());
  step.forward(true);
  EXPECT_TRUE(testing::all_close(step.output(), inference, 1e-6, 1e-7));
  model->train_on_batch(x, random_labels(8, 4, 5));
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(testing::all_close(normalization->weights()[i]->read(), before[i], 0, 0))
        << normalization->weights()[i]->name();
  }
  EXPECT_EQ(model->trainable_weights().size(), 4u);  // the convolution's and the Dense's
}

TEST(BatchNormalization, AnAxisOtherThanTheLastIsAClearError) {
  layers::BatchNormalization normalization(layers::BatchNormalizationOptions{.axis = 1, .name = "norm"});
  Random random(1);
  std::string error = testing::error_of([&] { normalization.build({2, 5, 5, 3}, random); });
  EXPECT_NE(error.find("BatchNormalization 'norm' normalises the last axis (channels_last); got axis=1"),
            std::string::npos) << error;
  EXPECT_NE(testing::error_of([] { layers::BatchNormalization(layers::BatchNormalizationOptions{.momentum = 1.5}); })
                .find("momentum must be in [0, 1]"), std::string::npos);
}

}  // namespace
}  // namespace tenfold
