// Functional models: the C++ functional API, gradients through merge layers and fan-out
// checked against finite differences, Keras configs both ways, and clear errors for graphs
// that cannot be a model.
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "core/random.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/dropout.h"
#include "layers/flatten.h"
#include "layers/global_pooling.h"
#include "layers/input.h"
#include "layers/merge.h"
#include "layers/reshape.h"
#include "io/model_file.h"
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

/// A training step of `model` (two inputs of 5x5x2, compiled here with SGD) on random inputs
/// and labels of `classes`; every weight's gradient checked against central differences of
/// step `epsilon`.
void expect_weight_gradients_of_two_input_model(models::Model& model, int64_t batch, int64_t classes,
                                                double epsilon) {
  model.compile(std::make_shared<optimizers::SGD>(0.1f), std::make_shared<losses::SparseCategoricalCrossentropy>());
  models::CompiledStep& step = model.compiled_step(batch, true);
  std::memcpy(step.input(0).raw_data(), random_tensor({batch, 5, 5, 2}, 1).raw_data(), step.input(0).num_bytes());
  std::memcpy(step.input(1).raw_data(), random_tensor({batch, 5, 5, 2}, 2).raw_data(), step.input(1).num_bytes());
  Tensor y = random_labels(batch, classes, 3);
  losses::SparseCategoricalCrossentropy loss;
  step.forward(true);
  step.backward(loss, y, double(batch));
  testing::expect_weight_gradients_match_finite_differences(step, model.weights(), loss, y, false, epsilon);
}

TEST(Functional, WeightGradientsMatchFiniteDifferences) {
  auto model = merge_everything_model();
  ASSERT_EQ(model->weights().size(), 6u);
  // A small step: a larger one moves some elements across a tie of Maximum, Minimum or
  // GlobalMaxPooling2D, where the loss has a kink (3e-3 did for 12 of 54 kernel entries).
  expect_weight_gradients_of_two_input_model(*model, 6, 4, 3e-4);
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

/// Keras' shared layers: a convolution and a Dense called on two inputs (a siamese pair), and
/// a Dense called twice in a row on its own output.
std::unique_ptr<models::Functional> shared_layers_model() {
  set_random_seed(9);
  auto left = layers::Input({5, 5, 2}, "left"), right = layers::Input({5, 5, 2}, "right");
  auto encode = conv(3, "tanh");
  auto flatten = make<layers::Flatten>();
  auto embed = make<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "tanh", .name = "embed"});
  auto refine = make<layers::Dense>(layers::DenseOptions{.units = 4, .activation = "tanh", .name = "refine"});
  KerasTensor a = (*embed)((*flatten)((*encode)(left)));
  KerasTensor b = (*embed)((*flatten)((*encode)(right)));
  KerasTensor both = (*refine)((*refine)((*make<layers::Subtract>())({a, b})));
  KerasTensor out = (*make<layers::Dense>(layers::DenseOptions{.units = 3, .activation = "softmax"}))(
      (*make<layers::Concatenate>())({a, b, both}));
  return std::make_unique<models::Functional>(std::vector<KerasTensor>{left, right}, std::vector<KerasTensor>{out},
                                              "siamese");
}

TEST(Functional, SharedLayersLearnFromEveryCall) {
  reset_layer_names();
  auto model = shared_layers_model();
  // Each layer once (conv2d, flatten, embed and refine are called twice), its weights once.
  ASSERT_EQ(model->layers().size(), 7u);
  std::vector<Variable*> weights = model->weights();
  ASSERT_EQ(weights.size(), 8u);
  EXPECT_EQ(model->count_params(), (2 * 9 * 3 + 3) + (75 * 4 + 4) + (4 * 4 + 4) + (12 * 3 + 3));
  // The weight gradients are the sums over the calls (a gradient of one call only would miss).
  expect_weight_gradients_of_two_input_model(*model, 5, 3, 1e-3);

  // Keras' config: one entry per shared layer with an inbound node per call, read back as the
  // same model.
  const nlohmann::json config = model->to_config();
  for (const nlohmann::json& layer : config["config"]["layers"]) {
    const std::string name = layer["name"];
    const size_t calls = name == "conv2d" || name == "flatten" || name == "embed" || name == "refine" ? 2 : name == "left" || name == "right" ? 0 : 1;
    EXPECT_EQ(layer["inbound_nodes"].size(), calls) << name;
  }
  EXPECT_NE(config.dump().find(R"("keras_history":["refine",1,0])"), std::string::npos);
  auto again = models::from_config(config);
  EXPECT_EQ(again->to_config(), config);
  for (size_t i = 0; i < weights.size(); ++i) again->weights()[i]->assign(weights[i]->read());
  models::Inputs x = {random_tensor({3, 5, 5, 2}, 7), random_tensor({3, 5, 5, 2}, 8)};
  EXPECT_TRUE(testing::all_close(again->predict(x)[0], model->predict(x)[0], 0, 0));

  // The summary lists a shared layer once, connected to every call's input, as Keras does.
  const std::string summary = model->summary();
  for (const char* expected : {"embed (Dense)", "flatten[0][0],", "flatten[1][0]", "refine[0][0]", "embed[1][0]"}) {
    EXPECT_NE(summary.find(expected), std::string::npos) << expected << "\n" << summary;
  }
  EXPECT_EQ(summary.find("embed (Dense)"), summary.rfind("embed (Dense)")) << summary;
}

TEST(Functional, ASharedDropoutDrawsEachCallsMask) {
  // Keras draws a new mask at each call: the two calls of one Dropout on one tensor differ.
  auto input = layers::Input({64});
  auto dropout = make<layers::Dropout>(0.5f);
  models::Functional model(input, (*make<layers::Subtract>())({(*dropout)(input), (*dropout)(input)}));
  models::CompiledStep& step = model.compiled_step(4, false);
  for (float& value : step.input(0).values<float>()) value = 1.0f;
  step.forward(true);
  int64_t differing = 0;
  for (float value : step.output(0).values<float>()) differing += value != 0.0f;
  EXPECT_GT(differing, 64) << "of 256";  // about half of the elements
}

TEST(Functional, ANestedFunctionalCalledTwiceGivesBothOutputs) {
  // Keras' file (tools/make_keras_fixtures.py): output_layers count the nested Functional's
  // calls from 1, inbound_nodes from 0; written back the same way.
  auto model = io::load_model_json(testing::fixture_path("keras/nested_functional.json"));
  ASSERT_EQ(model->num_outputs(), 2u);
  ASSERT_EQ(model->weights().size(), 2u);
  model->weights()[1]->assign(random_tensor({3}, 3));
  const Tensor a = random_tensor({2, 4}, 1), b = random_tensor({2, 4}, 2);
  const std::vector<Tensor> outputs = model->predict(models::Inputs{a, b});
  const Tensor kernel = model->weights()[0]->read(), bias = model->weights()[1]->read();
  for (size_t k = 0; k < 2; ++k) {
    const Tensor& x = k == 0 ? a : b;
    for (int64_t row = 0; row < 2; ++row) {
      for (int64_t unit = 0; unit < 3; ++unit) {
        double expected = bias.data<float>()[unit];
        for (int64_t i = 0; i < 4; ++i) expected += x.data<float>()[row * 4 + i] * kernel.data<float>()[i * 3 + unit];
        EXPECT_NEAR(outputs[k].data<float>()[row * 3 + unit], expected, 1e-5) << "output " << k;
      }
    }
  }
  std::ifstream file(testing::fixture_path("keras/nested_functional.json"));
  const nlohmann::json keras = nlohmann::json::parse(file);
  EXPECT_EQ(model->to_config()["config"]["output_layers"], keras["config"]["output_layers"]);
}

TEST(Functional, KerasTwoConfigOfASharedLayer) {
  // Keras 2 lists a shared layer's calls as nested lists, [[[layer, node, tensor, kwargs]], ...].
  using nlohmann::json;
  auto input = [](const std::string& name) {
    return json{{"class_name", "InputLayer"}, {"name", name},
                {"config", {{"name", name}, {"batch_input_shape", {nullptr, 4}}}}, {"inbound_nodes", json::array()}};
  };
  const json shared = {{"class_name", "Dense"}, {"name", "shared"}, {"config", {{"name", "shared"}, {"units", 3}}},
                       {"inbound_nodes", {{{"a", 0, 0, json::object()}}, {{"b", 0, 0, json::object()}}}}};
  const json add = {{"class_name", "Add"}, {"name", "sum"}, {"config", {{"name", "sum"}}},
                    {"inbound_nodes", {{{"shared", 0, 0, json::object()}, {"shared", 1, 0, json::object()}}}}};
  auto model = models::from_config({{"class_name", "Model"},
                                    {"config", {{"name", "keras2"}, {"layers", {input("a"), input("b"), shared, add}},
                                                {"input_layers", {{"a", 0, 0}, {"b", 0, 0}}},
                                                {"output_layers", {{"sum", 0, 0}}}}}});
  ASSERT_EQ(model->weights().size(), 2u);
  const Tensor a = random_tensor({2, 4}, 1), b = random_tensor({2, 4}, 2);
  // shared(a) + shared(b) = (a + b) W + 2 bias.
  model->weights()[1]->assign(random_tensor({3}, 3));
  const Tensor sum = model->predict(models::Inputs{a, b})[0];
  const Tensor kernel = model->weights()[0]->read(), bias = model->weights()[1]->read();
  for (int64_t row = 0; row < 2; ++row) {
    for (int64_t unit = 0; unit < 3; ++unit) {
      double expected = 2.0 * bias.data<float>()[unit];
      for (int64_t k = 0; k < 4; ++k) {
        expected += (a.data<float>()[row * 4 + k] + b.data<float>()[row * 4 + k]) * kernel.data<float>()[k * 3 + unit];
      }
      EXPECT_NEAR(sum.data<float>()[row * 3 + unit], expected, 1e-5);
    }
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
  auto longer = layers::Input({5}, "longer");
  EXPECT_NE(error_of([&] { (*dense)(longer); }).find("layer 'shared' was built for inputs (None, 4) and cannot take (None, 5)"),
            std::string::npos);
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
  auto unbuilt = make<models::Sequential>(std::vector<std::shared_ptr<Layer>>{make<layers::Dense>(layers::DenseOptions{.units = 2})},
                                          "unbuilt");
  EXPECT_NE(error_of([&] { (*unbuilt)(a); }).find("model 'unbuilt' is not built"), std::string::npos);
  models::Sequential on_stack({layers::Input({4}), make<layers::Dense>(layers::DenseOptions{.units = 2})}, "on_stack");
  EXPECT_NE(error_of([&] { on_stack(a); }).find("model 'on_stack' must be owned by a shared_ptr"), std::string::npos);
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
    nlohmann::json reads_second_call = layer_entry("Dense", "d2", dense, {"d1"});
    reads_second_call["inbound_nodes"][0]["args"][0]["config"]["keras_history"][1] = 1;
    models::from_config(functional_config({input, layer_entry("Dense", "d1", {{"units", 4}}, {"in"}), reads_second_call}, "d2"));
  });
  EXPECT_NE(message.find("layer 'd2' reads call 2 of 'd1', which the model config calls 1 time(s)"), std::string::npos)
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
