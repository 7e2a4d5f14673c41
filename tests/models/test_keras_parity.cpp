// Keras parity: from the same initial weights, 3 Adam steps on a fixed Fashion-MNIST batch end
// where Keras (TensorFlow backend) ends, within numpy.allclose rtol 1e-5, atol 1e-6 for every
// weight: the recipe's model, and a stack of convolutions that reaches what the recipe's does
// not (backward-data, strided 'same', tanh, max and average pooling, sigmoid).
// Fixtures: tools/make_keras_fixtures.py.
#include <gtest/gtest.h>

#include <fstream>

#include "io/model_file.h"
#include "layers/activation.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/global_pooling.h"
#include "layers/input.h"
#include "layers/flatten.h"
#include "layers/merge.h"
#include "layers/padding.h"
#include "layers/pooling.h"
#include "models/functional.h"
#include "models/seed_cnn.h"
#include "models/sequential.h"
#include "optimizers/adam.h"
#include "losses/crossentropy.h"
#include "support/check.h"
#include "support/npy.h"

namespace tenfold {
namespace {

using testing::fixture_path;
using testing::error_of;
using testing::read_npy;

std::string weight_file(const std::string& fixture, const std::string& stage, const Layer& layer,
                        const Variable& weight) {
  return fixture_path("keras/" + fixture + "/" + stage + "/" + layer.name() + "." + weight.name() + ".npy");
}

/// Compiles as every parity model is: Adam, sparse categorical crossentropy, accuracy.
void compile_for_parity(models::Model& model) {
  model.compile(std::make_shared<optimizers::Adam>(),
                std::make_shared<losses::SparseCategoricalCrossentropy>(), {"accuracy"});
}

/// Trains `model`, compiled, from the fixture's initial weights for 3 Adam steps on the parity
/// batch and compares with Keras: weights within rtol 1e-5 and `atol`. The fixture's
/// `extra_inputs` follow the images; its `extra_targets` the labels, which the fixture's
/// `labels` file replaces when given, as its `inputs` file replaces the images.
models::History check_three_adam_steps(models::Model& model, const std::string& fixture,
                                       const std::vector<std::string>& extra_inputs = {},
                                       const std::vector<std::string>& extra_targets = {},
                                       double atol = 1e-6, const std::string& labels = "",
                                       const std::string& inputs_file = "",
                                       const models::FitOptions& weighting = {}) {
  if (!model.optimizer()) compile_for_parity(model);
  for (Layer* layer : model.layers()) {
    for (Variable* weight : layer->weights()) {
      weight->assign(read_npy(weight_file(fixture, "initial", *layer, *weight)));
    }
  }
  Tensor x = read_npy(fixture_path(inputs_file.empty() ? "keras/parity/x.npy" : "keras/" + fixture + "/" + inputs_file + ".npy"));
  Tensor y = read_npy(fixture_path(labels.empty() ? "keras/parity/y.npy" : "keras/" + fixture + "/" + labels + ".npy"));
  models::Inputs inputs = {x};
  for (const std::string& name : extra_inputs) {
    inputs.push_back(read_npy(fixture_path("keras/" + fixture + "/" + name + ".npy")));
  }
  models::Targets targets = {y};
  for (const std::string& name : extra_targets) {
    targets.push_back(read_npy(fixture_path("keras/" + fixture + "/" + name + ".npy")));
  }
  models::FitOptions options = weighting;
  options.batch_size = x.shape()[0];
  options.epochs = 3;
  options.shuffle = false;
  options.verbose = 0;
  models::History history = model.fit(inputs, targets, options);

  std::vector<double> keras_losses =
      testing::read_npy_doubles(fixture_path("keras/" + fixture + "/losses.npy"));
  EXPECT_EQ(history.history.at("loss").size(), keras_losses.size());
  for (size_t step = 0; step < std::min(keras_losses.size(), history.history.at("loss").size()); ++step) {
    EXPECT_NEAR(history.history.at("loss")[step], keras_losses[step], 1e-5 * keras_losses[step])
        << "step " << step;
  }
  for (Layer* layer : model.layers()) {
    for (Variable* weight : layer->weights()) {
      Tensor expected = read_npy(weight_file(fixture, "final", *layer, *weight));
      EXPECT_TRUE(testing::all_close(weight->read(), expected, 1e-5, atol))
          << layer->name() << "/" << weight->name();
    }
  }
  return history;
}

TEST(KerasParity, ThreeAdamStepsOfTheRecipeModel) {
  reset_layer_names();
  check_three_adam_steps(*models::seed_cnn(), "parity");
}

TEST(KerasParity, SampleWeightsScaleEachSamplesLossAsKeras) {
  // Keras' sample_weight (0 to 2 across the batch) and class_weight (three classes weighted,
  // the rest 1): the loss is sum(w * loss) over the batch size, metrics unweighted.
  reset_layer_names();
  models::FitOptions weighted;
  weighted.sample_weight = read_npy(fixture_path("keras/parity_sample_weight/sample_weight.npy"));
  check_three_adam_steps(*models::seed_cnn(), "parity_sample_weight", {}, {}, 1e-6, "", "", weighted);
  reset_layer_names();
  models::FitOptions by_class;
  by_class.class_weight = {{0, 0.5}, {3, 2.0}, {7, 4.0}};
  check_three_adam_steps(*models::seed_cnn(), "parity_class_weight", {}, {}, 1e-6, "", "", by_class);
}

TEST(KerasParity, ThreeAdamStepsOfAConvolutionStack) {
  check_three_adam_steps(*io::load_model_json(fixture_path("keras/parity_conv_stack/model.json")),
                         "parity_conv_stack");
}

TEST(KerasParity, ThreeAdamStepsOfAResidualModel) {
  check_three_adam_steps(*io::load_model_json(fixture_path("keras/parity_residual/model.json")),
                         "parity_residual");
}

TEST(KerasParity, TheResidualModelWrittenWithTheFunctionalApi) {
  auto conv = [](int64_t filters, int64_t stride, const std::string& activation, const std::string& name) {
    return std::make_shared<layers::Conv2D>(layers::Conv2DOptions{.filters = filters, .kernel_size = {3, 3},
        .strides = {stride, stride}, .padding = "same", .activation = activation, .name = name});
  };
  auto inputs = layers::Input({28, 28, 1});
  KerasTensor x = (*conv(8, 1, "relu", "conv2d"))(inputs);
  KerasTensor y = (*conv(8, 1, "linear", "conv2d_1"))(x);
  y = (*std::make_shared<layers::Add>())({x, y});
  y = (*std::make_shared<layers::Activation>("relu"))(y);
  y = (*std::make_shared<layers::MaxPooling2D>())(y);
  y = (*conv(16, 2, "relu", "conv2d_2"))(y);
  y = (*std::make_shared<layers::GlobalAveragePooling2D>())(y);
  KerasTensor outputs = (*std::make_shared<layers::Dense>(
      layers::DenseOptions{.units = 10, .activation = "softmax", .name = "dense"}))(y);
  models::Functional model(inputs, outputs, "residual");
  check_three_adam_steps(model, "parity_residual");
}

TEST(KerasParity, ThreeAdamStepsOfTwoConcatenatedBranches) {
  check_three_adam_steps(*io::load_model_json(fixture_path("keras/parity_concat/model.json")),
                         "parity_concat");
}

TEST(KerasParity, ThreeAdamStepsOfAModelWithTwoInputs) {
  check_three_adam_steps(*io::load_model_json(fixture_path("keras/parity_two_inputs/model.json")),
                         "parity_two_inputs", {"meta"});
}

TEST(KerasParity, ThreeAdamStepsOfASequentialInsideAFunctional) {
  auto model = io::load_model_json(fixture_path("keras/parity_nested/model.json"));
  ASSERT_EQ(model->members().size(), 3u);
  EXPECT_EQ(model->members()[0].name(), "features");
  EXPECT_EQ(model->members()[0].class_name(), "Sequential");
  // One summary row for the nested model, as Keras shows it (the whole table is compared
  // with Keras' in test_sequential.cpp).
  const std::string summary = model->summary();
  for (const char* expected : {"features (Sequential)", "(None, 676)"}) {
    EXPECT_NE(summary.find(expected), std::string::npos) << expected << "\n" << summary;
  }
  EXPECT_EQ(summary.find("conv2d (Conv2D)"), std::string::npos) << summary;
  check_three_adam_steps(*model, "parity_nested");
}

TEST(KerasParity, ThreeAdamStepsOfSharedLayers) {
  // A Sequential encoder and a Dense called on two halves of the image, a Dense called twice
  // in a row: each learns from all its calls, as in Keras.
  auto model = io::load_model_json(fixture_path("keras/parity_shared/model.json"));
  std::vector<std::string> members;
  for (const auto& member : model->members()) members.push_back(member.name());
  EXPECT_EQ(members, (std::vector<std::string>{"cropping2d", "cropping2d_1", "encoder", "embed", "subtract", "refine",
                                               "concatenate", "dense"}));
  EXPECT_EQ(model->calls().size(), 11u);
  check_three_adam_steps(*model, "parity_shared");
}

TEST(KerasParity, TheSharedLayersModelWrittenWithTheFunctionalApi) {
  // The same model in C++: a Sequential called as a layer, on two tensors.
  reset_layer_names();
  auto dense = [](int64_t units, const std::string& activation, const std::string& name) {
    return std::make_shared<layers::Dense>(layers::DenseOptions{.units = units, .activation = activation, .name = name});
  };
  auto encoder = std::make_shared<models::Sequential>(
      std::vector<std::shared_ptr<Layer>>{
          layers::Input({14, 28, 1}),
          std::make_shared<layers::Conv2D>(layers::Conv2DOptions{.filters = 4, .activation = "relu", .name = "conv2d"}),
          std::make_shared<layers::MaxPooling2D>(), std::make_shared<layers::Flatten>()},
      "encoder");
  auto inputs = layers::Input({28, 28, 1});
  KerasTensor top = (*std::make_shared<layers::Cropping2D>(layers::Borders{{{0, 14}, {0, 0}}}))(inputs);
  KerasTensor bottom = (*std::make_shared<layers::Cropping2D>(layers::Borders{{{14, 0}, {0, 0}}}))(inputs);
  auto embed = dense(16, "relu", "embed");
  auto refine = dense(16, "tanh", "refine");
  KerasTensor a = (*embed)((*encoder)(top)), b = (*embed)((*encoder)(bottom));
  KerasTensor both = (*refine)((*refine)((*std::make_shared<layers::Subtract>())({a, b})));
  KerasTensor outputs = (*dense(10, "softmax", "dense"))((*std::make_shared<layers::Concatenate>())({a, b, both}));
  models::Functional model(inputs, outputs, "shared");
  const auto member = std::find_if(model.members().begin(), model.members().end(),
                                   [](const auto& each) { return each.name() == "encoder"; });
  ASSERT_NE(member, model.members().end());
  EXPECT_EQ(member->model, encoder);
  EXPECT_EQ(model.layers().size(), 10u);  // the encoder's 3 layers once
  check_three_adam_steps(model, "parity_shared");
  EXPECT_NE(error_of([&] { (*encoder)(inputs); }).find("model 'encoder' takes inputs (None, 14, 28, 1) but is called on "
                                                      "(None, 28, 28, 1)"),
            std::string::npos);
}

TEST(KerasParity, ThreeAdamStepsWithAFrozenConvolution) {
  // A small CNN whose first Conv2D has trainable=False: Adam keeps no slots for it and leaves
  // it as it was.
  auto model = io::load_model_json(fixture_path("keras/parity_frozen/model.json"));
  ASSERT_FALSE(model->layers()[0]->trainable());
  check_three_adam_steps(*model, "parity_frozen");
  EXPECT_EQ(model->trainable_weights().size(), 4u);
  EXPECT_NE(model->summary().find("Non-trainable params: 80"), std::string::npos) << model->summary();
  EXPECT_EQ(model->to_config()["config"]["layers"][1]["config"]["trainable"], false);
}

TEST(KerasParity, ThreeAdamStepsWithBatchNormalization) {
  // Batch statistics in training (4-D and 2-D inputs, without scale or center), the moving
  // statistics' updates (compared as weights), then inference from them.
  auto model = io::load_model_json(fixture_path("keras/parity_batchnorm/model.json"));
  // Adam's epsilon 1e-3 as the fixture's (tools/make_keras_fixtures.py says why).
  model->compile(std::make_shared<optimizers::Adam>(0.001f, 0.9f, 0.999f, 1e-3f),
                 std::make_shared<losses::SparseCategoricalCrossentropy>(), {"accuracy"});
  // atol 5e-6 (weights of magnitude ~0.05): Keras' own float32 gradients of this model are up
  // to 2.5e-4 of the largest away from float64 ones (a normalization's backward subtracts
  // means), Tenfold's up to 2.5e-5 (per-channel sums in double); 3 Adam steps of lr 1e-3 carry
  // that into the weights.
  check_three_adam_steps(*model, "parity_batchnorm", {}, {}, 5e-6);
  EXPECT_EQ(model->trainable_weights().size(), 9u);  // 4 kernels, 1 bias, 2 gammas, 2 betas
  int64_t trainable = 0;
  for (const Variable* weight : model->trainable_weights()) trainable += weight->shape().num_elements();
  EXPECT_EQ(model->count_params() - trainable, 2 * (8 + 16 + 32));  // the moving statistics
}

TEST(KerasParity, ThreeAdamStepsOfMobileNetStyleConvolutions) {
  check_three_adam_steps(*io::load_model_json(fixture_path("keras/parity_mobile/model.json")),
                         "parity_mobile");
}

TEST(KerasParity, ThreeAdamStepsOfConvNeXtLayers) {
  // Normalization (adapted and given), LayerNormalization on 4-D and 2-D inputs, Dense on 4-D
  // inputs, keras.applications' LayerScale and an op `x + y`.
  auto model = io::load_model_json(fixture_path("keras/parity_convnext/model.json"));
  // Adam's epsilon 1e-3 as the fixture's (tools/make_keras_fixtures.py says why).
  model->compile(std::make_shared<optimizers::Adam>(0.001f, 0.9f, 0.999f, 1e-3f),
                 std::make_shared<losses::SparseCategoricalCrossentropy>(), {"accuracy"});
  check_three_adam_steps(*model, "parity_convnext");
}

TEST(KerasParity, ThreeAdamStepsWithRegularizersAndConstraints) {
  // L1, L2 and L1L2 on kernels, biases, BatchNormalization's gamma and PReLU's alpha (in the
  // loss Keras reports, and in the gradients); UnitNorm over a Conv2D kernel's three input
  // axes, MaxNorm, MinMaxNorm and NonNeg after each update.
  // Activity regularizers on the first convolution's output and on the softmax output (its
  // gradient taken through the softmax, the loss working on the logits as Keras does).
  // atol 1e-5: the Dense kernel's element 677 has the smallest first-step gradient of its 4840,
  // 3.8e-7 against 0.16 at most (measured with tf.GradientTape), and Adam's first steps move it
  // by about the learning rate whatever its size, so float-order differences show (3e-6).
  auto model = io::load_model_json(fixture_path("keras/parity_regularized/model.json"));
  check_three_adam_steps(*model, "parity_regularized", {}, {}, 1e-5);
  // They survive Tenfold's own config.
  auto again = models::from_config(model->to_config());
  EXPECT_EQ(again->to_config(), model->to_config());
  EXPECT_NE(model->to_config().dump().find(R"("kernel_constraint":{"class_name":"UnitNorm","config":{"axis":[0,1,2]})"),
            std::string::npos);
}

TEST(KerasParity, ThreeAdamStepsOfSeparableConvolutionsPermuteAndAMiddleAxisSoftmax) {
  check_three_adam_steps(*io::load_model_json(fixture_path("keras/parity_separable/model.json")), "parity_separable");
}

TEST(KerasParity, ThreeAdamStepsOfOneDimensionalConvolutionsAndPooling) {
  check_three_adam_steps(*io::load_model_json(fixture_path("keras/parity_sequence/model.json")), "parity_sequence");
}

TEST(KerasParity, ThreeAdamStepsWithGroupNormalization) {
  check_three_adam_steps(*io::load_model_json(fixture_path("keras/parity_groupnorm/model.json")), "parity_groupnorm");
}

TEST(KerasParity, ThreeAdamStepsOfTransposedConvolutions) {
  check_three_adam_steps(*io::load_model_json(fixture_path("keras/parity_transpose/model.json")), "parity_transpose");
}

TEST(KerasParity, ThreeAdamStepsOfAnOutputPerPosition) {
  // Predictions [batch, 28, 5] with a label per step: the loss is the mean over samples and
  // steps, as Keras takes it, and so are its gradients.
  check_three_adam_steps(*io::load_model_json(fixture_path("keras/parity_per_position/model.json")),
                         "parity_per_position", {}, {}, 1e-6, "steps");
}

TEST(KerasParity, ThreeAdamStepsOfAnEmbeddingOfTokens) {
  // Keras' Adam on the dense gradient (tools/make_keras_fixtures.py's dense_step): Keras'
  // TensorFlow backend applies an Embedding's row-slice gradient row by row instead, so rows
  // absent from a batch keep their moments there (measured: losses 2.29848, 2.29671 against
  // 2.29869, 2.29708 dense); Keras on JAX or PyTorch, and Tenfold, update densely.
  check_three_adam_steps(*io::load_model_json(fixture_path("keras/parity_embedding/model.json")), "parity_embedding", {},
                         {}, 1e-6, "", "tokens");
}

TEST(KerasParity, ThreeAdamStepsWithMetricsGivenAsNamesAndObjects) {
  // The metrics of Keras' own .keras file (AUC on the PR curve named pr_auc, Recall at 0.3 as
  // objects; precision, mae, binary_accuracy as names), each step's value as Keras logs it.
  auto keras_file = io::load_model(fixture_path("keras/parity_binary/model.keras"));
  EXPECT_EQ(keras_file->metric_names(), (std::vector<std::string>{"pr_auc", "precision", "recall", "mae", "binary_accuracy"}));
  auto model = io::load_model_json(fixture_path("keras/parity_binary/model.json"));
  model->compile(std::make_shared<optimizers::Adam>(), losses::get("binary_crossentropy"),
                 keras_file->output_training()[0].metrics);
  // The fixture's targets replace the digit labels: is it a T-shirt (class 0)?
  models::History history = check_three_adam_steps(*model, "parity_binary", {}, {}, 1e-6, "is_top");
  std::ifstream file(fixture_path("keras/parity_binary/logs.json"));
  const nlohmann::json keras = nlohmann::json::parse(file);
  for (const auto& key : keras.at("keys")) {
    ASSERT_EQ(history.history.count(key), 1u) << key;
    for (size_t step = 0; step < 3; ++step) {
      double expected = keras.at("steps")[step].at(key).get<double>();
      EXPECT_NEAR(history.history.at(key)[step], expected, 1e-5 * std::abs(expected) + 1e-6) << key << " step " << step;
    }
  }
}

TEST(KerasParity, ThreeAdamStepsOfTwoOutputsWithLossWeights) {
  auto model = io::load_model_json(fixture_path("keras/parity_two_outputs/model.json"));
  model->compile(std::make_shared<optimizers::Adam>(),
                 {{"digit", std::make_shared<losses::SparseCategoricalCrossentropy>()},
                  {"bright", losses::get("mse")}},
                 {{"digit", 1.0}, {"bright", 0.5}}, {{"digit", {"accuracy"}}});
  // atol 1e-5: one of the convolution kernel's 36 entries ends 6.7e-6 (4e-5 relative) from
  // Keras. The first step's gradients of every weight agree within 2e-7 (1.5e-6 of the largest,
  // measured against tf.GradientTape); the kernel's gradient shrinks tenfold by the third step,
  // where Adam's normalisation magnifies float-order differences in the convolution.
  models::History history = check_three_adam_steps(*model, "parity_two_outputs", {}, {"bright"}, 1e-5);
  // Each output's loss and metric, named as Keras names them.
  std::ifstream file(fixture_path("keras/parity_two_outputs/logs.json"));
  const nlohmann::json keras = nlohmann::json::parse(file);
  for (const char* key : {"digit_loss", "bright_loss", "digit_accuracy"}) {
    ASSERT_EQ(history.history.count(key), 1u) << key;
    for (size_t step = 0; step < 3; ++step) {
      double expected = keras.at("steps")[step].at(key).get<double>();
      EXPECT_NEAR(history.history.at(key)[step], expected, 1e-5 * expected) << key << " step " << step;
    }
  }
}

}  // namespace
}  // namespace tenfold
