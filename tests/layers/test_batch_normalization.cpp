// BatchNormalization beyond Keras parity (tests/models/test_keras_parity.cpp): gradients
// through the batch statistics against finite differences, a frozen layer normalising with
// its moving statistics and leaving them alone, a ReLU fused after it, and bad axes.
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/random.h"
#include "kernels/bfloat16.h"
#include "layers/activation.h"
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

using testing::compute_dtypes_here;
using testing::random_labels;
using testing::random_tensor;

/// Conv2D -> BatchNormalization (-> `activation`) -> Flatten -> softmax Dense, the
/// normalization's gamma and beta away from 1 and 0.
std::unique_ptr<models::Sequential> small_model(bool trainable_normalization,
                                                std::shared_ptr<layers::Activation> activation = nullptr) {
  set_random_seed(9);
  auto normalization = std::make_shared<layers::BatchNormalization>();
  normalization->set_trainable(trainable_normalization);
  std::vector<std::shared_ptr<Layer>> layers = {
      layers::Input(Shape{5, 5, 2}),
      std::make_shared<layers::Conv2D>(layers::Conv2DOptions{.filters = 3, .kernel_size = {3, 3}, .padding = "same"}),
      normalization};
  if (activation) layers.push_back(activation);
  layers.push_back(std::make_shared<layers::Flatten>());
  layers.push_back(std::make_shared<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "softmax"}));
  auto model = std::make_unique<models::Sequential>(layers);
  for (Variable* weight : normalization->weights()) {
    weight->assign(random_tensor(weight->shape(), 11, 0.5, 1.5));
  }
  model->compile(std::make_shared<optimizers::SGD>(0.1f), std::make_shared<losses::SparseCategoricalCrossentropy>());
  return model;
}

void expect_gradients_match_finite_differences(std::unique_ptr<models::Sequential> model) {
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

TEST(BatchNormalization, GradientsThroughTheBatchStatisticsMatchFiniteDifferences) {
  expect_gradients_match_finite_differences(small_model(true));
}

TEST(BatchNormalization, GradientsThroughAFusedReluMatchFiniteDifferences) {
  auto model = small_model(true, std::make_shared<layers::Activation>("relu"));
  EXPECT_EQ(model->compiled_step(6, true).step_names()[1],
            model->layers()[1]->name() + "+" + model->layers()[2]->name());  // one fused step
  expect_gradients_match_finite_differences(std::move(model));
}

/// `tensor` in `dtype`: float32 as it is, bfloat16 rounded.
Tensor in_dtype(const Tensor& tensor, DType dtype) {
  if (dtype == DType::float32) return tensor;
  Tensor result(tensor.shape(), dtype);
  kernels::to_bfloat16(tensor.data<float>(), result.data<bfloat16>(), tensor.num_elements());
  return result;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.num_bytes() == b.num_bytes() && std::memcmp(a.raw_data(), b.raw_data(), a.num_bytes()) == 0;
}

TEST(BatchNormalization, AFusedReluComputesWhatTheTwoStepsDo) {
  // The fused step (kernels/batch_norm.h) against the normalization's step then the
  // activation's, bit for bit: output, input gradient, gamma and beta gradients; training and
  // frozen, relu and a capped ReLU, float32 and (where the CPU has bfloat16 units) bfloat16.
  const Shape shape{6, 5, 5, 8};
  for (bool trainable : {true, false}) {
    for (const std::shared_ptr<layers::Activation>& relu :
         {std::make_shared<layers::Activation>("relu"), std::shared_ptr<layers::Activation>(
                                                            std::make_shared<layers::ReLU>(1.5))}) {
      for (DType dtype : compute_dtypes_here()) {
        SCOPED_TRACE(std::string(trainable ? "training " : "frozen ") + relu->class_name() + " " + dtype_name(dtype));
        layers::BatchNormalization normalization;
        normalization.set_trainable(trainable);
        Random random(1);
        normalization.build(shape, random);
        for (Variable* weight : normalization.weights()) weight->assign(random_tensor(weight->shape(), 11, 0.5, 1.5));
        const CompileOptions options{.compute_dtype = dtype};
        auto fused = normalization.compile_with_activation(shape, relu->kind(), options);
        ASSERT_NE(fused, nullptr);
        auto alone = normalization.compile(shape, options);
        auto activation = relu->compile(shape, options);
        const Tensor x = in_dtype(random_tensor(shape, 2), dtype);
        const Tensor upstream = in_dtype(random_tensor(shape, 3), dtype);
        Tensor fused_y(shape, dtype), normalized(shape, dtype), y(shape, dtype);
        fused->forward(x, fused_y, true);
        alone->forward(x, normalized, true);
        activation->forward(normalized, y, true);
        EXPECT_TRUE(same_bytes(fused_y, y));
        Tensor dy = upstream, fused_dy = upstream, dnormalized(shape, dtype), dx(shape, dtype), fused_dx(shape, dtype);
        std::vector<Tensor> gradients = {Tensor(Shape{8}), Tensor(Shape{8})};
        std::vector<Tensor> fused_gradients = {Tensor(Shape{8}), Tensor(Shape{8})};
        fused->backward(x, fused_y, fused_dy, &fused_dx, fused_gradients, false);
        activation->backward(normalized, y, dy, &dnormalized, {}, false);
        alone->backward(x, normalized, dnormalized, &dx, gradients, false);
        EXPECT_TRUE(same_bytes(fused_dx, dx));
        for (size_t k = 0; k < 2; ++k) EXPECT_TRUE(same_bytes(fused_gradients[k], gradients[k])) << k;
      }
    }
  }
  // Not fused: a ReLU with a negative slope; a cap bfloat16 cannot hold (0.6) in bfloat16.
  layers::BatchNormalization normalization;
  Random random(1);
  normalization.build(shape, random);
  EXPECT_EQ(normalization.compile_with_activation(shape, layers::LeakyReLU().kind(), {}), nullptr);
  const kernels::Activation inexact_cap = layers::ReLU(0.6).kind();
  EXPECT_NE(normalization.compile_with_activation(shape, inexact_cap, {}), nullptr);
  EXPECT_EQ(normalization.compile_with_activation(shape, inexact_cap, {.compute_dtype = DType::bfloat16}), nullptr);
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
