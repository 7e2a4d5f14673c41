// Functional models: the C++ functional API, gradients through merge layers and fan-out
// checked against finite differences, Keras configs both ways, and clear errors for graphs
// that cannot be a model.
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/random.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/flatten.h"
#include "layers/global_pooling.h"
#include "layers/input.h"
#include "layers/merge.h"
#include "layers/reshape.h"
#include "losses/crossentropy.h"
#include "models/functional.h"
#include "models/sequential.h"
#include "optimizers/sgd.h"
#include "support/check.h"
#include "support/layer_test.h"

namespace tenfold {
namespace {

using testing::error_of;

using testing::random_labels;
using testing::random_tensor;

template <typename L, typename... Args>
std::shared_ptr<L> make(Args&&... args) {
  return std::make_shared<L>(std::forward<Args>(args)...);
}

std::shared_ptr<layers::Conv2D> conv(int64_t filters, const std::string& activation) {
  return make<layers::Conv2D>(layers::Conv2DOptions{
      .filters = filters, .kernel_size = {3, 3}, .padding = "same", .activation = activation});
}

/// Two inputs through every merge layer, global pooling and Reshape; `x` feeds six layers.
std::unique_ptr<models::Functional> merge_everything_model() {
  set_random_seed(5);
  auto a = layers::Input({5, 5, 2}, "a"), b = layers::Input({5, 5, 2}, "b");
  KerasTensor x = (*conv(3, "tanh"))(a), y = (*conv(3, "tanh"))(b);
  KerasTensor s = (*make<layers::Add>())({x, y}), d = (*make<layers::Subtract>())({x, y});
  KerasTensor m = (*make<layers::Multiply>())({s, d});
  KerasTensor high = (*make<layers::Maximum>())({x, y}), low = (*make<layers::Minimum>())({x, y});
  KerasTensor mean = (*make<layers::Average>())({high, low, x});
  KerasTensor joined = (*make<layers::Concatenate>())({m, mean, x});
  KerasTensor pooled = (*make<layers::Concatenate>())(
      {(*make<layers::GlobalAveragePooling2D>())(joined), (*make<layers::GlobalMaxPooling2D>())(joined)});
  KerasTensor flat = (*make<layers::Flatten>())((*make<layers::Reshape>(std::vector<int64_t>{3, -1}))(pooled));
  KerasTensor out = (*make<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "softmax"}))(flat);
  return std::make_unique<models::Functional>(std::vector<KerasTensor>{a, b}, std::vector<KerasTensor>{out});
}

TEST(Functional, WeightGradientsMatchFiniteDifferences) {
  auto model = merge_everything_model();
  model->compile(std::make_shared<optimizers::SGD>(0.1f), std::make_shared<losses::SparseCategoricalCrossentropy>());
  const int64_t batch = 6;
  models::CompiledStep& step = model->compiled_step(batch, true);
  std::memcpy(step.input(0).raw_data(), random_tensor({batch, 5, 5, 2}, 1).raw_data(), step.input(0).num_bytes());
  std::memcpy(step.input(1).raw_data(), random_tensor({batch, 5, 5, 2}, 2).raw_data(), step.input(1).num_bytes());
  Tensor y = random_labels(batch, 4, 3);
  losses::SparseCategoricalCrossentropy loss;
  step.forward(true);
  step.backward(loss, y, double(batch));
  std::vector<Variable*> weights = model->weights();
  ASSERT_EQ(weights.size(), 6u);
  // A small step: a larger one moves some elements across a tie of Maximum, Minimum or
  // GlobalMaxPooling2D, where the loss has a kink (3e-3 did for 12 of 54 kernel entries).
  testing::expect_weight_gradients_match_finite_differences(step, weights, loss, y, false, 3e-4);
}

TEST(Functional, BroadcastingMergesMatchFiniteDifferences) {
  // Squeeze-and-excitation as EfficientNet writes it: x * Reshape(1, 1, C)(sigmoid Dense of
  // the pooled x), then the other merges with a broadcast input first or second, of 3 inputs.
  set_random_seed(6);
  auto input = layers::Input({4, 4, 3});
  KerasTensor x = (*conv(3, "tanh"))(input);
  KerasTensor squeezed = (*make<layers::GlobalAveragePooling2D>())(x);
  KerasTensor excite = (*make<layers::Reshape>(std::vector<int64_t>{1, 1, 3}))(
      (*make<layers::Dense>(layers::DenseOptions{.units = 3, .activation = "sigmoid"}))(squeezed));
  KerasTensor scaled = (*make<layers::Multiply>())({x, excite});
  KerasTensor row = (*make<layers::Reshape>(std::vector<int64_t>{1, 4, 3}))(
      (*make<layers::Dense>(layers::DenseOptions{.units = 12, .activation = "tanh"}))(squeezed));
  KerasTensor sum = (*make<layers::Add>())({excite, scaled, row});
  KerasTensor difference = (*make<layers::Subtract>())({row, sum});
  KerasTensor high = (*make<layers::Maximum>())({difference, excite});
  KerasTensor mean = (*make<layers::Average>())({excite, high});
  KerasTensor product = (*make<layers::Multiply>())({mean, row, excite});
  KerasTensor out = (*make<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "softmax"}))(
      (*make<layers::Flatten>())(product));
  models::Functional model({input}, {out});
  EXPECT_EQ(model.graph().sample_shape(model.graph().outputs()[0]), Shape({4}));
  model.compile(std::make_shared<optimizers::SGD>(0.1f), std::make_shared<losses::SparseCategoricalCrossentropy>());
  const int64_t batch = 5;
  models::CompiledStep& step = model.compiled_step(batch, true);
  std::memcpy(step.input().raw_data(), random_tensor({batch, 4, 4, 3}, 1).raw_data(), step.input().num_bytes());
  Tensor y = random_labels(batch, 4, 3);
  losses::SparseCategoricalCrossentropy loss;
  step.forward(true);
  step.backward(loss, y, double(batch));
  testing::expect_weight_gradients_match_finite_differences(step, model.weights(), loss, y, false, 3e-4);
  // Shapes that do not broadcast are refused.
  EXPECT_NE(error_of([&] { (*make<layers::Add>())({x, (*make<layers::Reshape>(std::vector<int64_t>{2, 2, 3}))(row)}); })
                .find("broadcast along axes of size 1"),
            std::string::npos);
}

TEST(Functional, ConfigRoundTripGivesTheSameModel) {
  auto model = merge_everything_model();
  auto again = models::from_config(model->to_config());
  EXPECT_EQ(again->class_name(), "Functional");
  EXPECT_EQ(again->to_config(), model->to_config());
  for (size_t i = 0; i < model->weights().size(); ++i) again->weights()[i]->assign(model->weights()[i]->read());
  models::Inputs x = {random_tensor({3, 5, 5, 2}, 7), random_tensor({3, 5, 5, 2}, 8)};
  EXPECT_TRUE(testing::all_close(again->predict(x)[0], model->predict(x)[0], 0, 0));
}

TEST(Functional, SummaryHasConnectedTo) {
  reset_layer_names();
  auto inputs = layers::Input({8}, "features");
  KerasTensor h = (*make<layers::Dense>(layers::DenseOptions{.units = 4}))(inputs);
  KerasTensor g = (*make<layers::Dense>(layers::DenseOptions{.units = 4}))(inputs);
  KerasTensor out = (*make<layers::Add>())({h, g});
  models::Functional model(inputs, out, "two_paths");
  std::string summary = model.summary();
  for (const char* expected : {"Model: \"two_paths\"", "Connected to", "│ features            │", "│ (InputLayer)        │",
                               "(None, 8)", "dense_1 (Dense)", "features[0][0]", "add (Add)", "dense[0][0],", "dense_1[0][0]",
                               "Total params: 72 (288.00 B)"}) {
    EXPECT_NE(summary.find(expected), std::string::npos) << expected << "\n" << summary;
  }
}

TEST(Functional, GraphsThatCannotBeAModelAreClearErrors) {
  auto a = layers::Input({4}, "a"), b = layers::Input({4}, "b"), c = layers::Input({4}, "c");
  auto dense = make<layers::Dense>(layers::DenseOptions{.units = 3, .name = "shared"});
  KerasTensor from_a = (*dense)(a);
  EXPECT_NE(error_of([&] { models::Functional({a, b}, {from_a}); })
                .find("input 'b' of model"), std::string::npos);
  EXPECT_NE(error_of([&] { models::Functional({a}, {(*make<layers::Add>())({a, c})}); })
                .find("depend on input 'c', which is not among the model's inputs"), std::string::npos);
  KerasTensor from_b = (*dense)(b);  // the same layer called again
  EXPECT_NE(error_of([&] { models::Functional({a, b}, {(*make<layers::Add>())({from_a, from_b})}); })
                .find("layer 'shared' is called more than once"), std::string::npos);
  auto wide = layers::Input({5}, "wide");
  std::string mismatch = error_of([&] { (*make<layers::Add>("sum"))({a, wide}); });
  EXPECT_NE(mismatch.find("layer 'sum' (Add) needs inputs of one shape, got (None, 4), (None, 5)"), std::string::npos)
      << mismatch;
  auto image = layers::Input({4, 4, 2}), other = layers::Input({3, 4, 2});
  mismatch = error_of([&] { (*make<layers::Concatenate>(-1, "join"))({image, other}); });
  EXPECT_NE(mismatch.find("layer 'join' (Concatenate) needs inputs that agree on every axis but axis -1"),
            std::string::npos) << mismatch;
  EXPECT_NE(error_of([&] { (*make<layers::Add>("one"))(a); }).find("must be called on a list of inputs"),
            std::string::npos);
  layers::Dense unowned(layers::DenseOptions{.units = 2, .name = "unowned"});
  EXPECT_NE(error_of([&] { unowned(a); }).find("must be owned by a shared_ptr"), std::string::npos);
  EXPECT_NE(error_of([&] { models::Sequential({layers::Input({4}), make<layers::Add>()}); })
                .find("use it in a Functional model"), std::string::npos);
}

nlohmann::json keras_tensor(const std::string& layer) {
  return {{"class_name", "__keras_tensor__"}, {"config", {{"keras_history", {layer, 0, 0}}}}};
}

nlohmann::json layer_entry(const std::string& class_name, const std::string& name, nlohmann::json config,
                           std::vector<std::string> reads) {
  config["name"] = name;
  nlohmann::json args = nlohmann::json::array();
  for (const std::string& read : reads) args.push_back(keras_tensor(read));
  nlohmann::json nodes = reads.empty() ? nlohmann::json::array()
                                       : nlohmann::json::array({{{"args", reads.size() > 1 ? nlohmann::json::array({args}) : args},
                                                                 {"kwargs", nlohmann::json::object()}}});
  return {{"class_name", class_name}, {"name", name}, {"config", config}, {"inbound_nodes", nodes}};
}

nlohmann::json functional_config(nlohmann::json layers, const std::string& output) {
  return {{"class_name", "Functional"},
          {"config", {{"name", "m"}, {"layers", layers}, {"input_layers", {"in", 0, 0}}, {"output_layers", {output, 0, 0}}}}};
}

TEST(Functional, BadConfigsAreClearErrors) {
  const nlohmann::json input = layer_entry("InputLayer", "in", {{"batch_shape", {nullptr, 4}}}, {});
  const nlohmann::json dense = {{"units", 2}};
  std::string message = error_of([&] {
    models::from_config(functional_config({input, layer_entry("Dense", "d1", dense, {"d2"}),
                                           layer_entry("Dense", "d2", dense, {"d1"})}, "d2"));
  });
  EXPECT_NE(message.find("graph has a cycle: layers 'd1', 'd2'"), std::string::npos) << message;
  message = error_of([&] {
    models::from_config(functional_config({input, layer_entry("Dense", "d1", dense, {"ghost"})}, "d1"));
  });
  EXPECT_NE(message.find("layer 'd1' reads 'ghost', which the model config does not define"), std::string::npos)
      << message;
  message = error_of([&] {
    models::from_config(functional_config({input, layer_entry("Dense", "d1", dense, {"in"}),
                                           layer_entry("Dense", "lonely", dense, {})}, "lonely"));
  });
  EXPECT_NE(message.find("layer 'lonely' is called on no input"), std::string::npos) << message;
  message = error_of([&] {
    nlohmann::json add = layer_entry("Add", "sum", nlohmann::json::object(), {"in", "d1"});
    models::from_config(functional_config({input, layer_entry("Dense", "d1", dense, {"in"}), add}, "sum"));
  });
  EXPECT_NE(message.find("layer 'sum' (Add) needs inputs of one shape, got (None, 4), (None, 2)"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace tenfold
