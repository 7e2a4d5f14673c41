#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "core/error.h"
#include "io/model_file.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/flatten.h"
#include "layers/input.h"
#include "losses/crossentropy.h"
#include "models/seed_cnn.h"
#include "optimizers/adam.h"
#include "optimizers/sgd.h"
#include "support/check.h"

namespace tenfold {
namespace {

using testing::random_values;

using testing::fixture_path;
using testing::random_labels;

/// Values uniform in [0, 1), as images.
Tensor random_image(const Shape& shape, uint64_t seed) { return testing::random_tensor(shape, seed, 0, 1); }

TEST(Sequential, SummaryIsKerasTableForTheRecipe) {
  reset_layer_names();
  setenv("COLUMNS", "80", 1);  // as a log file shows it
  auto model = models::seed_cnn();
  std::string summary = model->summary();
  EXPECT_NE(summary.find("│ conv2d (Conv2D)                 │ (None, 26, 26, 32)     │           320 │"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("│ dense (Dense)                   │ (None, 128)            │       692,352 │"), std::string::npos);
  EXPECT_NE(summary.find(" Total params: 693,962 (2.65 MB)\n"), std::string::npos);
  EXPECT_EQ(model->count_params(), 693962);
}

// Keras 3's own summaries of fixture models (tools/make_summary_fixtures.py), character for
// character: Sequential, Functional with "Connected to", a nested model, non-trainable
// weights, optimizer parameters of a trained and of an untrained file, long names cut.
TEST(Sequential, SummaryMatchesKerasCharacterForCharacter) {
  setenv("COLUMNS", "80", 1);
  for (const auto& [name, path] : std::vector<std::pair<std::string, std::string>>{
           {"small", "models/small.keras"},
           {"tabular", "models/tabular.keras"},
           {"residual", "keras/parity_residual/model.json"},
           {"nested", "keras/parity_nested/model.json"},
           {"shared", "keras/parity_shared/model.json"},
           {"batchnorm", "keras/parity_batchnorm/model.json"}}) {
    SCOPED_TRACE(name);
    reset_layer_names();
    auto model = path.ends_with(".json") ? io::load_model_json(fixture_path(path)) : io::load_model(fixture_path(path));
    std::ifstream file(fixture_path("keras/summaries/" + name + ".txt"));
    const std::string expected((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    EXPECT_EQ(model->summary(), expected);
  }
}

TEST(Sequential, FitEvaluatePredictShapesAndLogs) {
  auto model = models::seed_cnn();
  model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  Tensor x = random_image({70, 28, 28, 1}, 1);
  Tensor y = random_labels(70, 10, 2);
  models::FitOptions options;
  options.batch_size = 32;  // 32 + 32 + a last partial batch of 6
  options.epochs = 2;
  options.verbose = 0;
  options.validation_data = {{x, y}};
  models::History history = model->fit(x, y, options);
  EXPECT_EQ(history.epoch, (std::vector<int>{0, 1}));
  for (const char* key : {"loss", "accuracy", "val_loss", "val_accuracy"}) {
    ASSERT_EQ(history.history.at(key).size(), 2u) << key;
  }
  auto result = model->evaluate(x, y, 16, 0);
  EXPECT_NEAR(result.at("loss"), history.history.at("val_loss")[1], 1e-5);
  EXPECT_GE(result.at("accuracy"), 0.0);
  EXPECT_LE(result.at("accuracy"), 1.0);

  Tensor predictions = model->predict(x, 64);
  ASSERT_EQ(predictions.shape(), (Shape{70, 10}));
  for (int64_t row = 0; row < 70; ++row) {
    double sum = 0;
    for (int64_t c = 0; c < 10; ++c) sum += predictions.data<float>()[row * 10 + c];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
  // Batch size does not change predictions.
  EXPECT_TRUE(testing::all_close(model->predict(x, 7), predictions, 1e-5, 1e-6));
  // The accuracy metric is argmax(prediction) == label, averaged.
  int correct = 0;
  for (int64_t row = 0; row < 70; ++row) {
    const float* p = predictions.data<float>() + row * 10;
    correct += std::max_element(p, p + 10) - p == y.data<int32_t>()[row];
  }
  EXPECT_NEAR(result.at("accuracy"), correct / 70.0, 1e-9);
}

/// Full-batch, silent fitting for the tests that compare two models step by step.
models::FitOptions quiet_fit(int64_t batch_size, int epochs) {
  models::FitOptions options;
  options.batch_size = batch_size;
  options.epochs = epochs;
  options.verbose = 0;
  return options;
}

TEST(Sequential, LearnsASeparableProblem) {
  // Two classes separated by the sign of the first feature: Adam must reach high accuracy.
  models::Sequential model({layers::Input({4}),
                            std::make_shared<layers::Dense>(layers::DenseOptions{.units = 16, .activation = "tanh"}),
                            std::make_shared<layers::Dense>(layers::DenseOptions{.units = 2, .activation = "softmax"})});
  model.compile(std::make_shared<optimizers::Adam>(0.01f),
                std::make_shared<losses::SparseCategoricalCrossentropy>(), {"accuracy"});
  Tensor x(Shape{256, 4});
  Tensor y(Shape{256}, DType::int32);
  auto values = random_values(256 * 4, 3);
  std::copy(values.begin(), values.end(), x.data<float>());
  for (int64_t i = 0; i < 256; ++i) y.data<int32_t>()[i] = x.data<float>()[i * 4] > 0 ? 1 : 0;
  models::FitOptions options;
  options.epochs = 30;
  options.verbose = 0;
  auto history = model.fit(x, y, options);
  EXPECT_GT(history.history.at("accuracy").back(), 0.95);
  EXPECT_LT(history.history.at("loss").back(), history.history.at("loss").front() / 3);
}

TEST(Sequential, SoftmaxFusedLossEqualsLogitsLoss) {
  // Dense(softmax) + crossentropy on probabilities trains exactly as Dense(linear) +
  // crossentropy from logits: Keras' numerically stable path.
  auto make = [](const std::string& activation, bool from_logits) {
    set_random_seed(5);
    auto model = std::make_unique<models::Sequential>(std::vector<std::shared_ptr<Layer>>{
        layers::Input({6}),
        std::make_shared<layers::Dense>(layers::DenseOptions{.units = 3, .activation = activation})});
    model->compile(std::make_shared<optimizers::SGD>(0.5f),
                   std::make_shared<losses::SparseCategoricalCrossentropy>(from_logits));
    return model;
  };
  auto fused = make("softmax", false), logits = make("linear", true);
  Tensor x = random_image({8, 6}, 4);
  Tensor y = random_labels(8, 3, 5);
  models::FitOptions options = quiet_fit(8, 3);
  auto fused_history = fused->fit(x, y, options);
  auto logits_history = logits->fit(x, y, options);
  for (size_t epoch = 0; epoch < 3; ++epoch) {
    EXPECT_NEAR(fused_history.history.at("loss")[epoch], logits_history.history.at("loss")[epoch], 1e-6);
  }
  EXPECT_TRUE(testing::all_close(fused->weights()[0]->read(), logits->weights()[0]->read(), 1e-6, 1e-7));
}

TEST(Sequential, LeadingLayersWithoutWeightsGetNoBackward) {
  // Flatten then Dense trains exactly as the same Dense on flat inputs, and its backward stops
  // at the first Dense: no input gradient of the first weighted layer is computed.
  auto make = [](bool flatten_first) {
    set_random_seed(9);
    std::vector<std::shared_ptr<Layer>> stack = {layers::Input(flatten_first ? Shape{4, 3, 2} : Shape{24})};
    if (flatten_first) stack.push_back(std::make_shared<layers::Flatten>());
    stack.push_back(std::make_shared<layers::Dense>(layers::DenseOptions{.units = 5, .activation = "relu"}));
    stack.push_back(std::make_shared<layers::Dense>(layers::DenseOptions{.units = 3, .activation = "softmax"}));
    auto model = std::make_unique<models::Sequential>(stack);
    model->compile(std::make_shared<optimizers::SGD>(0.5f),
                   std::make_shared<losses::SparseCategoricalCrossentropy>());
    return model;
  };
  auto flattening = make(true), flat = make(false);
  EXPECT_EQ(flattening->compiled_step(8, true).first_backward_step(), 1u);
  EXPECT_EQ(flat->compiled_step(8, true).first_backward_step(), 0u);
  Tensor x = random_image({8, 24}, 6);
  Tensor y = random_labels(8, 3, 7);
  models::FitOptions options = quiet_fit(8, 3);
  flattening->fit(x.reshaped({8, 4, 3, 2}), y, options);
  flat->fit(x, y, options);
  for (size_t i = 0; i < flat->weights().size(); ++i) {
    EXPECT_TRUE(testing::all_close(flattening->weights()[i]->read(), flat->weights()[i]->read(), 1e-6, 1e-7));
  }
}

TEST(Sequential, AFrozenFirstLayerRunsNoBackwardAndChangingItTakesACompile) {
  reset_layer_names();
  set_random_seed(9);
  auto model = std::make_unique<models::Sequential>(std::vector<std::shared_ptr<Layer>>{
      layers::Input(Shape{24}),
      std::make_shared<layers::Dense>(layers::DenseOptions{.units = 5, .activation = "relu"}),
      std::make_shared<layers::Dense>(layers::DenseOptions{.units = 3, .activation = "softmax"})});
  model->layers()[0]->set_trainable(false);
  model->compile(std::make_shared<optimizers::SGD>(0.5f), std::make_shared<losses::SparseCategoricalCrossentropy>());
  EXPECT_EQ(model->compiled_step(8, true).first_backward_step(), 1u);
  EXPECT_EQ(model->compiled_step(8, true).weight_gradients().size(), 2u);
  Tensor frozen = model->layers()[0]->weights()[0]->read();
  Tensor x = random_image({8, 24}, 6);
  Tensor y = random_labels(8, 3, 7);
  model->fit(x, y, quiet_fit(8, 2));
  EXPECT_TRUE(testing::all_close(model->layers()[0]->weights()[0]->read(), frozen, 0, 0));
  model->layers()[0]->set_trainable(true);
  EXPECT_NE(testing::error_of([&] { model->fit(x, y, quiet_fit(8, 1)); })
                .find("layer 'dense' was made trainable after compile: compile the model again"),
            std::string::npos);
}

TEST(Sequential, FrozenConv2DLayersComputeNoWeightGradientAndPassGradientsOn) {
  // A frozen convolution is compiled without weight gradients (no backward-weights primitive;
  // the few-channel first-layer kernel, none at all). One SGD step must move every other
  // layer as when nothing is frozen (the gradients come from the same forward), so a frozen
  // layer's input gradient stays exact, and leave the frozen one as it was.
  auto make = [](int frozen_layer, bool train) {
    reset_layer_names();
    set_random_seed(4);
    auto model = std::make_unique<models::Sequential>(std::vector<std::shared_ptr<Layer>>{
        layers::Input(Shape{9, 9, 1}),
        std::make_shared<layers::Conv2D>(layers::Conv2DOptions{.filters = 6, .padding = "same", .activation = "tanh"}),
        std::make_shared<layers::Conv2D>(layers::Conv2DOptions{.filters = 8, .activation = "relu"}),
        std::make_shared<layers::Flatten>(),
        std::make_shared<layers::Dense>(layers::DenseOptions{.units = 3, .activation = "softmax"})});
    if (frozen_layer >= 0) model->layers()[size_t(frozen_layer)]->set_trainable(false);
    model->compile(std::make_shared<optimizers::SGD>(0.1f), std::make_shared<losses::SparseCategoricalCrossentropy>());
    if (train) model->fit(random_image({16, 9, 9, 1}, 6), random_labels(16, 3, 7), quiet_fit(16, 1));
    return model;
  };
  auto weight = [](const std::unique_ptr<models::Sequential>& model, size_t layer) {
    return model->layers()[layer]->weights()[0]->read();
  };
  const auto initial = make(-1, false);
  const auto all_trained = make(-1, true);
  for (int frozen_layer : {0, 1}) {  // the few-channel first layer, then a oneDNN one
    SCOPED_TRACE("frozen layer " + std::to_string(frozen_layer));
    const auto model = make(frozen_layer, true);
    for (size_t layer : {0u, 1u, 3u}) {
      const auto& expected = int(layer) == frozen_layer ? initial : all_trained;
      EXPECT_TRUE(testing::all_close(weight(model, layer), weight(expected, layer), 1e-6, 1e-7)) << layer;
    }
    EXPECT_FALSE(testing::all_close(weight(initial, size_t(frozen_layer)), weight(all_trained, size_t(frozen_layer)),
                                    1e-6, 1e-7));  // the step moves it when trainable
  }
}

TEST(Sequential, TenfoldProfileTimesEachStep) {
  // TENFOLD_PROFILE: the training step prints each step's forward and backward when it goes.
  reset_layer_names();
  setenv("TENFOLD_PROFILE", "1", 1);
  auto model = std::make_unique<models::Sequential>(std::vector<std::shared_ptr<Layer>>{
      layers::Input(Shape{4, 3, 2}), std::make_shared<layers::Flatten>(),
      std::make_shared<layers::Dense>(layers::DenseOptions{.units = 5, .activation = "relu"}),
      std::make_shared<layers::Dense>(layers::DenseOptions{.units = 3, .activation = "softmax"})});
  model->compile(std::make_shared<optimizers::SGD>(0.5f), std::make_shared<losses::SparseCategoricalCrossentropy>());
  ::testing::internal::CaptureStderr();
  model->fit(random_image({8, 4, 3, 2}, 6), random_labels(8, 3, 7), quiet_fit(4, 2));
  model.reset();
  unsetenv("TENFOLD_PROFILE");
  const std::string report = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("mean ms over 3 steps (batch 4)"), std::string::npos) << report;  // 4 steps, the first left out
  for (const std::string step : {"flatten", "dense", "dense_1"}) {
    EXPECT_NE(report.find("%  " + step + "\n"), std::string::npos) << step << " in\n" << report;
  }
  EXPECT_NE(report.find("100%  the layers"), std::string::npos) << report;
}

TEST(Sequential, CompiledStepReusesMemory) {
  auto model = models::seed_cnn();
  models::CompiledStep& step = model->compiled_step(64, true);
  EXPECT_LT(step.arena_bytes(), step.unshared_bytes());
  // Inference keeps only two activations live at a time.
  models::CompiledStep& inference = model->compiled_step(64, false);
  EXPECT_LT(inference.arena_bytes(), step.arena_bytes() / 2);
}

TEST(Sequential, ClearErrors) {
  auto model = models::seed_cnn();
  Tensor x = random_image({4, 28, 28, 1}, 1);
  Tensor y = random_labels(4, 10, 2);
  auto message = [](auto&& action) {
    try {
      action();
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { model->fit(x, y); }).find("must be compiled before fit"), std::string::npos);
  model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  Tensor wrong = random_image({4, 28, 28}, 1);
  EXPECT_NE(message([&] { model->fit(wrong, y); }).find("expects input (None, 28, 28, 1)"), std::string::npos);
  EXPECT_NE(message([&] { model->fit(x, random_labels(3, 10, 1)); }).find("4 samples but 3 labels"), std::string::npos);
  EXPECT_NE(message([&] { model->compile("ftrl", "mse"); }).find("optimizer 'ftrl' is not supported"), std::string::npos);
  models::FitOptions zero_batch;
  zero_batch.batch_size = 0;
  EXPECT_NE(message([&] { model->fit(x, y, zero_batch); }).find("batch_size must be positive, got 0"), std::string::npos);
  EXPECT_NE(message([&] { model->evaluate(x, y, 0); }).find("batch_size must be positive, got 0"), std::string::npos);
  EXPECT_NE(message([&] { model->predict(x, 0); }).find("batch_size must be positive, got 0"), std::string::npos);
  EXPECT_NE(message([] { layers::Dense(layers::DenseOptions{.units = 2, .activation = "celu"}); })
                .find("activation 'celu' is not supported; use one of linear, relu"),
            std::string::npos);
  Tensor bad_labels = y.clone();
  bad_labels.data<int32_t>()[2] = 11;
  std::string bad_label_message = message([&] { model->fit(x, bad_labels); });
  EXPECT_NE(bad_label_message.find("label 11 at row 2 is outside [0, 10)"), std::string::npos) << bad_label_message;
}

}  // namespace
}  // namespace tenfold
