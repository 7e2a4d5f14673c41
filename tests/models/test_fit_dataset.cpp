// fit and evaluate fed by data::Dataset, as the recipe does.
#include <gtest/gtest.h>

#include <thread>

#include "core/error.h"
#include "layers/dense.h"
#include "layers/input.h"
#include "models/sequential.h"
#include "support/check.h"

namespace tenfold {
namespace {

using testing::error_of;

std::unique_ptr<models::Sequential> small_model() {
  set_random_seed(3);
  auto model = std::make_unique<models::Sequential>(std::vector<std::shared_ptr<Layer>>{
      layers::Input({4}),
      std::make_shared<layers::Dense>(layers::DenseOptions{.units = 8, .activation = "relu"}),
      std::make_shared<layers::Dense>(layers::DenseOptions{.units = 3, .activation = "softmax"})});
  model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  return model;
}

struct Data {
  Tensor x{Shape{50, 4}}, y{Shape{50}, DType::int32};
  Data() {
    auto values = testing::random_values(200, 4);
    std::copy(values.begin(), values.end(), x.data<float>());
    for (int i = 0; i < 50; ++i) y.data<int32_t>()[i] = i % 3;
  }
};

TEST(FitDataset, TrainsAsArraysDoWithTheSameBatches) {
  Data data;
  auto from_arrays = small_model(), from_dataset = small_model();
  models::FitOptions options;
  options.batch_size = 16;
  options.epochs = 3;
  options.shuffle = false;
  options.verbose = 0;
  auto expected = from_arrays->fit(data.x, data.y, options);
  auto pipeline = data::Dataset::from_tensor_slices({data.x, data.y}).batch(16).prefetch(data::AUTOTUNE);
  options.validation_dataset = pipeline;
  auto actual = from_dataset->fit(pipeline, options);
  for (size_t epoch = 0; epoch < 3; ++epoch) {
    EXPECT_DOUBLE_EQ(actual.history.at("loss")[epoch], expected.history.at("loss")[epoch]);
  }
  EXPECT_EQ(actual.history.at("val_accuracy").size(), 3u);
  EXPECT_TRUE(testing::all_close(from_dataset->weights()[0]->read(), from_arrays->weights()[0]->read(), 0, 0));
  auto evaluated = from_dataset->evaluate(pipeline, 0);
  EXPECT_NEAR(evaluated.at("loss"), actual.history.at("val_loss").back(), 1e-12);
}

TEST(FitDataset, ClearErrorsInsteadOfHangs) {
  Data data;
  auto model = small_model();
  models::FitOptions options;
  options.verbose = 0;
  auto empty = data::Dataset::from_tensor_slices({data.x, data.y}).take(0).batch(8);
  EXPECT_NE(error_of([&] { model->fit(empty, options); }).find("produced no batches in epoch 1"),
            std::string::npos);
  auto forever = data::Dataset::from_tensor_slices({data.x, data.y}).batch(8).repeat();
  EXPECT_NE(error_of([&] { model->fit(forever, options); }).find("infinite"), std::string::npos);
  auto failing = data::Dataset::from_tensor_slices({data.x, data.y})
                     .map([](const data::Element& e) -> data::Element {
                            if (e[1].data<int32_t>()[0] == 2) {
                              throw Error(ErrorCode::invalid_argument, "cannot decode sample");
                            }
                            return e;
                          }, 2)
                     .batch(8)
                     .prefetch(2);
  EXPECT_NE(error_of([&] { model->fit(failing, options); }).find("cannot decode sample"),
            std::string::npos);
  auto features_only = data::Dataset::from_tensor_slices({data.x}).batch(8);
  EXPECT_NE(error_of([&] { model->fit(features_only, options); }).find("(features, labels[, sample weights])"),
            std::string::npos);
}

/// What fit writes to stderr while training a small model on `dataset` for `epochs` epochs.
std::string fit_warnings(const data::Dataset& dataset, int epochs) {
  auto model = small_model();
  models::FitOptions options;
  options.epochs = epochs;
  options.verbose = 0;
  ::testing::internal::CaptureStderr();
  model->fit(dataset, options);
  return ::testing::internal::GetCapturedStderr();
}

TEST(FitDataset, WarnsOnceWhenInputBound) {
  Data data;
  auto slow = data::Dataset::from_tensor_slices({data.x, data.y})
                  .map([](const data::Element& e) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(2));
                    return e;
                  })
                  .batch(10);
  std::string warnings = fit_warnings(slow, 2);
  EXPECT_NE(warnings.find("training waited for input"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("prefetch(AUTOTUNE)"), std::string::npos);
  EXPECT_EQ(warnings.find("WARNING", warnings.find("WARNING") + 1), std::string::npos) << "once";
}

// An epoch of a few milliseconds waits on its input for a share of them; that is no bottleneck.
TEST(FitDataset, NoInputWarningForATinyEpoch) {
  Data data;
  std::string warnings = fit_warnings(data::Dataset::from_tensor_slices({data.x, data.y}).batch(10), 3);
  EXPECT_EQ(warnings.find("training waited for input"), std::string::npos) << warnings;
}

}  // namespace
}  // namespace tenfold
