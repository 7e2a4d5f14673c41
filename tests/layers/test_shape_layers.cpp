// Layers that move elements or work along an axis: Permute against the index formula it
// promises, Softmax over a middle axis against its definition; their gradients through the
// weights before them against central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/random.h"
#include "layers/activation.h"
#include "layers/conv2d.h"
#include "layers/conv2d_transpose.h"
#include "layers/dense.h"
#include "layers/embedding.h"
#include "layers/global_pooling.h"
#include "layers/flatten.h"
#include "layers/input.h"
#include "layers/permute.h"
#include "losses/crossentropy.h"
#include "models/sequential.h"
#include "optimizers/sgd.h"
#include "support/check.h"
#include "support/layer_test.h"

namespace tenfold {
namespace {

using testing::random_labels;
using testing::random_tensor;

TEST(Permute, MovesEveryElementAsKerasDims) {
  // dims (3, 1, 2): output[b, i, j, k] = input[b, j, k, i].
  models::Sequential model({layers::Input(Shape{3, 4, 5}), std::make_shared<layers::Permute>(std::vector<int64_t>{3, 1, 2})});
  Tensor x = random_tensor({2, 3, 4, 5}, 3);
  Tensor y = model.predict(x);
  ASSERT_EQ(y.shape(), Shape({2, 5, 3, 4}));
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 5; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        for (int64_t k = 0; k < 4; ++k) {
          EXPECT_EQ(y.data<float>()[((b * 5 + i) * 3 + j) * 4 + k], x.data<float>()[((b * 3 + j) * 4 + k) * 5 + i]);
        }
      }
    }
  }
}

TEST(Permute, GradientsMatchFiniteDifferences) {
  set_random_seed(9);
  models::Sequential model({layers::Input(Shape{4, 3, 2}),
                            std::make_shared<layers::Conv2D>(layers::Conv2DOptions{.filters = 3, .kernel_size = {2, 2},
                                                                                   .padding = "same"}),
                            std::make_shared<layers::Permute>(std::vector<int64_t>{2, 3, 1}),
                            std::make_shared<layers::Flatten>(),
                            std::make_shared<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "softmax"})});
  testing::expect_model_gradients_match_finite_differences(model, 5, 4);
}

TEST(Conv2DTranspose, GradientsMatchFiniteDifferences) {
  set_random_seed(11);
  models::Sequential model({layers::Input(Shape{3, 3, 2}),
                            std::make_shared<layers::Conv2DTranspose>(layers::Conv2DOptions{
                                .filters = 3, .kernel_size = {3, 3}, .strides = {2, 2}, .activation = "tanh"}),
                            std::make_shared<layers::Conv2DTranspose>(layers::Conv2DOptions{
                                .filters = 2, .kernel_size = {2, 2}, .padding = "same"}),
                            std::make_shared<layers::Flatten>(),
                            std::make_shared<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "softmax"})});
  testing::expect_model_gradients_match_finite_differences(model, 4, 4);
}

TEST(Embedding, GradientsMatchFiniteDifferences) {
  set_random_seed(12);
  models::Sequential model({layers::Input(Shape{6}), std::make_shared<layers::Embedding>(5, 3),
                            std::make_shared<layers::GlobalAveragePooling1D>(),
                            std::make_shared<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "softmax"})});
  Tensor indices = random_tensor({4, 6}, 2, 0, 4.99);
  for (float& v : indices.values<float>()) v = std::floor(v);
  testing::expect_model_gradients_match_finite_differences(model, 4, 4, indices);
}

TEST(Permute, LifecycleAndRefusals) {
  testing::run_layer_test({{"class_name", "Permute"}, {"config", {{"dims", {2, 1}}}}}, {4, 3, 6}, {4, 6, 3}, 0);
  EXPECT_NE(testing::error_of([] { layers::Permute(std::vector<int64_t>{0, 1}); }).find("dims must be a permutation of 1..2"),
            std::string::npos);
  layers::Permute two(std::vector<int64_t>{2, 1});
  EXPECT_NE(testing::error_of([&] { two.compute_output_shape(Shape{4, 3, 6, 2}); }).find("expects inputs of rank 3"),
            std::string::npos);
}

TEST(Softmax, NormalisesAMiddleAxis) {
  // Axis 1 of (batch, 3, 4): each of the 4 columns of a sample sums to one.
  models::Sequential model({layers::Input(Shape{3, 4}), std::make_shared<layers::Softmax>(1)});
  Tensor x = random_tensor({2, 3, 4}, 5, -3.0, 3.0);
  Tensor y = model.predict(x);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t c = 0; c < 4; ++c) {
      double sum = 0;
      for (int64_t r = 0; r < 3; ++r) sum += std::exp(double(x.data<float>()[(b * 3 + r) * 4 + c]));
      for (int64_t r = 0; r < 3; ++r) {
        const int64_t at = (b * 3 + r) * 4 + c;
        EXPECT_NEAR(y.data<float>()[at], std::exp(double(x.data<float>()[at])) / sum, 1e-6);
      }
    }
  }
}

TEST(Softmax, MiddleAxisGradientsMatchFiniteDifferences) {
  set_random_seed(10);
  models::Sequential model({layers::Input(Shape{3, 3, 2}),
                            std::make_shared<layers::Conv2D>(layers::Conv2DOptions{.filters = 3, .kernel_size = {2, 2},
                                                                                   .padding = "same"}),
                            std::make_shared<layers::Softmax>(2), std::make_shared<layers::Flatten>(),
                            std::make_shared<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "softmax"})});
  testing::expect_model_gradients_match_finite_differences(model, 5, 4);
  testing::run_layer_test({{"class_name", "Softmax"}, {"config", {{"axis", 1}}}}, {4, 3, 6}, {4, 3, 6}, 0);
}

}  // namespace
}  // namespace tenfold
