// Keras' bfloat16 policies: mixed_bfloat16 (float32 variables, bfloat16 compute) and bfloat16
// (bfloat16 variables too). Against Keras (TensorFlow backend, fixtures by
// tools/make_keras_fixtures.py): 3 Adam steps of the recipe's model (mixed_bfloat16) and of a
// convolution stack (bfloat16) from the same initial weights, and Keras files made under each.
//
// Tolerance, from bfloat16's 8-bit significand: each rounding errs by up to 2^-9 relative, and
// Tenfold and TensorFlow round in different places (TensorFlow after every op, Tenfold after
// each layer), so activations differ by a few 2^-9 and the loss by about as much: losses are
// compared within 2^-7 relative. Adam divides each gradient by its own magnitude, so a weight's
// update (about the learning rate per step) flips where its gradient is near zero: weights are
// compared by their updates, final - initial, as a whole: the L2 distance between Tenfold's
// and Keras' updates within 2^-4 of the size of Keras' update (measured: 0.024; the same model
// in float32 is 0.093 from Keras' mixed_bfloat16 updates, so the bound tells the two apart).
// Predictions (probabilities below 1, rounded to bfloat16) within 2^-7.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "io/model_file.h"
#include "kernels/bfloat16.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/dropout.h"
#include "layers/embedding.h"
#include "layers/input.h"
#include "models/sequential.h"
#include "losses/crossentropy.h"
#include "losses/elementwise.h"
#include "optimizers/adam.h"
#include "support/check.h"
#include "support/npy.h"

namespace tenfold {
namespace {

using testing::fixture_path;
using testing::read_npy;

Tensor fixture_weight(const std::string& fixture, const std::string& stage, const Layer& layer,
                      const Variable& weight) {
  return read_npy(fixture_path("keras/" + fixture + "/" + stage + "/" + layer.name() + "." + weight.name() + ".npy"));
}

struct UpdateDistance {
  double tenfold_to_keras = 0, keras_update = 0;
  double relative() const { return std::sqrt(tenfold_to_keras / keras_update); }
};

/// Trains `model` 3 steps of `adam` (Keras' default Adam when null) on the parity batch's
/// labels and the fixture `inputs` (a path under fixtures/keras, without .npy) from the
/// fixture's initial weights; returns its losses.
std::vector<double> three_adam_steps(models::Model& model, const std::string& fixture,
                                     const std::string& inputs = "parity/x",
                                     std::shared_ptr<optimizers::Adam> adam = nullptr) {
  model.compile(adam ? adam : std::make_shared<optimizers::Adam>(),
                std::make_shared<losses::SparseCategoricalCrossentropy>(), {"accuracy"});
  for (Layer* layer : model.layers()) {
    for (Variable* weight : layer->weights()) weight->assign(fixture_weight(fixture, "initial", *layer, *weight));
  }
  Tensor x = read_npy(fixture_path("keras/" + inputs + ".npy"));
  Tensor y = read_npy(fixture_path("keras/parity/y.npy"));
  models::FitOptions options;
  options.batch_size = x.shape()[0];
  options.epochs = 3;
  options.shuffle = false;
  options.verbose = 0;
  return model.fit(x, y, options).history.at("loss");
}

/// Adds up the squared distance of the model's updates from the fixture's initial weights to
/// the fixture's final ones.
void add_update_distance(const models::Model& model, const std::string& fixture, UpdateDistance& distance) {
  for (Layer* layer : model.layers()) {
    for (Variable* weight : layer->weights()) {
      Tensor initial = fixture_weight(fixture, "initial", *layer, *weight);
      Tensor keras = fixture_weight(fixture, "final", *layer, *weight);
      Tensor tenfold = weight->read();
      for (int64_t i = 0; i < keras.num_elements(); ++i) {
        const double keras_update = double(keras.data<float>()[i]) - initial.data<float>()[i];
        const double difference = double(tenfold.data<float>()[i]) - keras.data<float>()[i];
        distance.keras_update += keras_update * keras_update;
        distance.tenfold_to_keras += difference * difference;
      }
    }
  }
}

TEST(MixedBfloat16, ThreeAdamStepsOfTheRecipeModelAsKeras) {
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 computes in float32";
  reset_layer_names();
  auto model = io::load_model_json(fixture_path("keras/parity_mixed_bfloat16/model.json"));
  for (Layer* layer : model->layers()) EXPECT_EQ(layer->dtype_policy(), DTypePolicy::mixed_bfloat16) << layer->name();
  UpdateDistance mixed;
  std::vector<double> losses = three_adam_steps(*model, "parity_mixed_bfloat16");
  add_update_distance(*model, "parity_mixed_bfloat16", mixed);
  std::vector<double> keras = testing::read_npy_doubles(fixture_path("keras/parity_mixed_bfloat16/losses.npy"));
  ASSERT_EQ(losses.size(), keras.size());
  for (size_t step = 0; step < keras.size(); ++step) {
    EXPECT_NEAR(losses[step], keras[step], std::ldexp(keras[step], -7)) << "step " << step;
  }
  // The same model in float32: its updates are further from Keras' bfloat16 ones, or the
  // comparison could not tell the policies apart.
  reset_layer_names();
  auto float32 = io::load_model_json(fixture_path("keras/parity_mixed_bfloat16/model.json"));
  for (Layer* layer : float32->layers()) layer->set_dtype_policy(DTypePolicy::float32);
  UpdateDistance plain;
  three_adam_steps(*float32, "parity_mixed_bfloat16");
  add_update_distance(*float32, "parity_mixed_bfloat16", plain);
  EXPECT_LT(mixed.relative(), 0.0625);
  EXPECT_GT(plain.relative(), 0.0625);
}

TEST(MixedBfloat16, EveryParityModelTrainsAsKerasFloat32DoesWithinBfloat16) {
  // The Keras parity models (their layers through native bfloat16 kernels or AutocastStep):
  // under mixed_bfloat16, from the fixture's initial weights, 3 Adam steps' losses within 2^-5
  // of Keras' float32 ones.
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 computes in float32";
  const std::vector<std::pair<std::string, std::string>> fixtures = {
      {"parity_conv_stack", "parity/x"}, {"parity_residual", "parity/x"}, {"parity_concat", "parity/x"},
      {"parity_nested", "parity/x"},     {"parity_shared", "parity/x"},   {"parity_frozen", "parity/x"},   {"parity_batchnorm", "parity/x"},
      {"parity_mobile", "parity/x"},     {"parity_convnext", "parity/x"}, {"parity_separable", "parity/x"},
      {"parity_sequence", "parity/x"},   {"parity_groupnorm", "parity/x"}, {"parity_transpose", "parity/x"},
      {"parity_embedding", "parity_embedding/tokens"}};
  for (const auto& [fixture, inputs] : fixtures) {
    SCOPED_TRACE(fixture);
    reset_layer_names();
    auto model = io::load_model_json(fixture_path("keras/" + fixture + "/model.json"));
    model->set_dtype_policy(DTypePolicy::mixed_bfloat16);
    std::vector<double> losses = three_adam_steps(*model, fixture, inputs);
    std::vector<double> keras = testing::read_npy_doubles(fixture_path("keras/" + fixture + "/losses.npy"));
    ASSERT_EQ(losses.size(), keras.size());
    for (size_t step = 0; step < keras.size(); ++step) {
      EXPECT_NEAR(losses[step], keras[step], std::ldexp(keras[step], -5)) << "step " << step;
    }
  }
}

TEST(MixedBfloat16, EmbeddingTokensAreNotRounded) {
  // Keras casts a layer's floating inputs to bfloat16, not an Embedding's token ids: token 257
  // (not a bfloat16 value: it would round to 256) picks row 257.
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 computes in float32";
  auto embedding = std::make_shared<layers::Embedding>(1000, 4);
  models::Sequential model({layers::Input({1}), embedding});
  model.set_dtype_policy(DTypePolicy::mixed_bfloat16);
  Tensor tokens(Shape{2, 1});
  tokens.data<float>()[0] = 257;
  tokens.data<float>()[1] = 999;
  Tensor rows = model.predict(tokens);
  Tensor table = embedding->weights()[0]->read();
  for (int64_t sample = 0; sample < 2; ++sample) {
    const int64_t token = int64_t(tokens.data<float>()[sample]);
    for (int64_t i = 0; i < 4; ++i) {
      const float expected = kernels::to_float(kernels::to_bfloat16(table.data<float>()[token * 4 + i]));
      EXPECT_EQ(rows.data<float>()[sample * 4 + i], expected) << "token " << token;
    }
  }
}

TEST(MixedBfloat16, DropoutDropsTheSameUnitsInBfloat16) {
  // A training forward of Dense + Dropout under each policy, same seed and weights: the same
  // units dropped, the kept ones scaled alike (within the bfloat16 rounding).
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 computes in float32";
  auto output_under = [](DTypePolicy policy) {
    reset_layer_names();
    set_random_seed(4);
    models::Sequential model({layers::Input({16}), std::make_shared<layers::Dense>(layers::DenseOptions{.units = 64}),
                              std::make_shared<layers::Dropout>(0.5f, 9)});
    model.set_dtype_policy(policy);
    model.compile(std::make_shared<optimizers::Adam>(), std::make_shared<losses::MeanSquaredError>());
    models::CompiledStep& step = model.compiled_step(32, true);
    Tensor& x = step.input();
    for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = float(i % 7) / 7 - 0.4f;
    step.forward(true);
    return step.output().clone();
  };
  Tensor float32 = output_under(DTypePolicy::float32), mixed = output_under(DTypePolicy::mixed_bfloat16);
  int64_t dropped = 0;
  for (int64_t i = 0; i < float32.num_elements(); ++i) {
    dropped += float32.data<float>()[i] == 0;
    EXPECT_EQ(float32.data<float>()[i] == 0, mixed.data<float>()[i] == 0) << i;
  }
  EXPECT_GT(dropped, float32.num_elements() / 3);
  EXPECT_TRUE(testing::all_close(mixed, float32, 1.0 / 64, 1.0 / 256));
}

TEST(MixedBfloat16, KerasFilesLoadWithTheirPolicyAndSaveIt) {
  const std::string directory = fixture_path("keras/parity_mixed_bfloat16_conv_stack/");
  Tensor x = read_npy(fixture_path("keras/parity/x.npy")).slice_batch(0, 8);
  Tensor keras = read_npy(directory + "predictions.npy");
  for (const char* file : {"model.keras", "model.h5"}) {
    SCOPED_TRACE(file);
    auto model = io::load_model(directory + file);
    for (Layer* layer : model->layers()) EXPECT_EQ(layer->dtype_policy(), DTypePolicy::mixed_bfloat16) << layer->name();
    EXPECT_TRUE(testing::all_close(model->predict(x), keras, 0, 1.0 / 128));
    // Written back as Keras 3 writes it.
    const nlohmann::json config = model->layers().front()->get_config();
    EXPECT_EQ(config.at("dtype").at("class_name"), "DTypePolicy");
    EXPECT_EQ(config.at("dtype").at("config").at("name"), "mixed_bfloat16");
  }
}

// Keras' bfloat16 policy: bfloat16 variables and optimizer slots too. The fixture's Adam has
// beta_2 0.99 (Keras' default 0.999 is 1.0 in bfloat16: no update). The forward and backward
// are mixed_bfloat16's, so the losses' tolerance is the same; the update rounds after every
// operation as Keras' does (bit for bit in test_optimizers), so what differs is the gradients'
// rounding: Tenfold's updates within 2^-4 of Keras' (measured 0.030), and the same steps on
// float32 variables (mixed_bfloat16) further by half again at least (measured 0.072).
TEST(Bfloat16Policy, ThreeAdamStepsOfAConvStackAsKeras) {
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; bfloat16 computes in float32";
  const std::string fixture = "parity_bfloat16_conv_stack";
  auto beta_2_099 = [] { return std::make_shared<optimizers::Adam>(0.01f, 0.9f, 0.99f); };
  reset_layer_names();
  auto model = io::load_model_json(fixture_path("keras/" + fixture + "/model.json"));
  UpdateDistance bfloat16;
  std::vector<double> losses = three_adam_steps(*model, fixture, "parity/x", beta_2_099());
  add_update_distance(*model, fixture, bfloat16);
  for (Layer* layer : model->layers()) {
    EXPECT_EQ(layer->dtype_policy(), DTypePolicy::bfloat16) << layer->name();
    for (const Variable* weight : layer->weights()) {
      EXPECT_EQ(weight->dtype(), DType::bfloat16);
      Tensor rounded = weight->read();
      kernels::round_to_bfloat16(rounded.data<float>(), rounded.data<float>(), rounded.num_elements());
      EXPECT_TRUE(testing::all_close(weight->read(), rounded, 0, 0)) << layer->name() << "." << weight->name();
    }
  }
  std::vector<double> keras = testing::read_npy_doubles(fixture_path("keras/" + fixture + "/losses.npy"));
  ASSERT_EQ(losses.size(), keras.size());
  for (size_t step = 0; step < keras.size(); ++step) {
    EXPECT_NEAR(losses[step], keras[step], std::ldexp(keras[step], -7)) << "step " << step;
  }
  reset_layer_names();
  auto mixed = io::load_model_json(fixture_path("keras/" + fixture + "/model.json"));
  mixed->set_dtype_policy(DTypePolicy::mixed_bfloat16);
  UpdateDistance float32_variables;
  three_adam_steps(*mixed, fixture, "parity/x", beta_2_099());
  add_update_distance(*mixed, fixture, float32_variables);
  EXPECT_LT(bfloat16.relative(), 0.0625);
  EXPECT_GT(float32_variables.relative(), 1.5 * bfloat16.relative());
}

TEST(Bfloat16Policy, ParityModelsTrainAsKerasFloat32DoesWithinBfloat16AndKeepBfloat16Weights) {
  // Under the bfloat16 policy, from the fixture's initial weights, 3 steps of Adam with beta_2
  // 0.99 (whose first update equals the default's, lr * sign(g), in exact arithmetic): losses
  // within 2^-5 of Keras' float32 ones, and every weight, BatchNormalization's moving statistics
  // and the optimizer's slots included, a bfloat16 value afterwards.
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; bfloat16 computes in float32";
  auto is_bfloat16 = [](const Tensor& values) {
    Tensor rounded = values.clone();
    kernels::round_to_bfloat16(rounded.data<float>(), rounded.data<float>(), rounded.num_elements());
    return testing::all_close(values, rounded, 0, 0);
  };
  for (const char* fixture : {"parity_residual", "parity_batchnorm", "parity_mobile", "parity_concat"}) {
    SCOPED_TRACE(fixture);
    reset_layer_names();
    auto model = io::load_model_json(fixture_path(std::string("keras/") + fixture + "/model.json"));
    model->set_dtype_policy(DTypePolicy::bfloat16);
    std::vector<double> losses =
        three_adam_steps(*model, fixture, "parity/x", std::make_shared<optimizers::Adam>(0.001f, 0.9f, 0.99f));
    std::vector<double> keras = testing::read_npy_doubles(fixture_path(std::string("keras/") + fixture + "/losses.npy"));
    ASSERT_EQ(losses.size(), keras.size());
    for (size_t step = 0; step < keras.size(); ++step) {
      EXPECT_NEAR(losses[step], keras[step], std::ldexp(keras[step], -5)) << "step " << step;
    }
    for (const Variable* weight : model->weights()) EXPECT_TRUE(is_bfloat16(weight->value())) << weight->name();
    for (size_t i = 0; i < model->trainable_weights().size(); ++i) {
      for (int slot = 0; slot < 2; ++slot) EXPECT_TRUE(is_bfloat16(model->optimizer()->slot(i, slot)));
    }
  }
}

TEST(Bfloat16Policy, KerasFilesLoadWithTheirBfloat16WeightsAndTenfoldWritesThemAsKerasDoes) {
  // Keras writes bfloat16 variables as h5py's 2-byte opaque values (.keras: with the attribute
  // dtype="bfloat16"; .h5: without, and Keras cannot load those back). Tenfold reads both; it
  // writes .keras as Keras does and .h5 in float32, which holds every bfloat16 exactly.
  const std::string directory = fixture_path("keras/parity_bfloat16_conv_stack/");
  Tensor x = read_npy(fixture_path("keras/parity/x.npy")).slice_batch(0, 8);
  Tensor keras = read_npy(directory + "predictions.npy");
  for (const char* file : {"model.keras", "model.h5"}) {
    SCOPED_TRACE(file);
    reset_layer_names();
    auto model = io::load_model(directory + file);
    for (Layer* layer : model->layers()) {
      EXPECT_EQ(layer->dtype_policy(), DTypePolicy::bfloat16) << layer->name();
      for (Variable* weight : layer->weights()) {
        EXPECT_TRUE(testing::all_close(weight->read(), fixture_weight("parity_bfloat16_conv_stack", "final", *layer, *weight), 0, 0));
      }
    }
    if (cpu_has_bfloat16_units()) {
      EXPECT_TRUE(testing::all_close(model->predict(x), keras, 0, 1.0 / 128));
    }
    const std::filesystem::path written =
        std::filesystem::temp_directory_path() / ("tenfold_bfloat16_" + std::to_string(getpid()) + "_" + file);
    io::save_model(*model, written.string());
    auto loaded = io::load_model(written.string());
    std::filesystem::remove(written);
    for (size_t i = 0; i < model->weights().size(); ++i) {
      EXPECT_EQ(loaded->weights()[i]->dtype(), DType::bfloat16);
      EXPECT_TRUE(testing::all_close(loaded->weights()[i]->read(), model->weights()[i]->read(), 0, 0));
    }
  }
}

TEST(Bfloat16Policy, AKerasFileCompiledWithKerasDefaultAdamPredictsButRefusesToTrain) {
  // As a TPU user writes it: made under the policy, compiled with optimizer="adam", untrained.
  // It loads and predicts as Keras does; training is refused before the step, since Keras'
  // Adam would update nothing (beta_2 0.999 is 1.0 in bfloat16), and the weights stay as they
  // were.
  auto model = io::load_model(fixture_path("models/bfloat16_adam.keras"));
  Tensor x = read_npy(fixture_path("models/x.npy"));
  for (const Variable* weight : model->weights()) EXPECT_EQ(weight->dtype(), DType::bfloat16);
  if (cpu_has_bfloat16_units()) {
    EXPECT_TRUE(testing::all_close(model->predict(x), read_npy(fixture_path("models/bfloat16_adam_predictions.npy")), 0,
                                   1.0 / 128));
  }
  const Tensor kernel = model->weights()[0]->read();
  const std::string error = testing::error_of([&] { model->train_on_batch(x, read_npy(fixture_path("models/y.npy"))); });
  EXPECT_NE(error.find("Adam's beta_2 = 0.999 is 1.0 in bfloat16, so Keras' Adam makes no update at all"), std::string::npos)
      << error;
  EXPECT_TRUE(testing::all_close(model->weights()[0]->read(), kernel, 0, 0));
}

TEST(MixedBfloat16, ActivationsAndGradientsTakeHalfTheArena) {
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 computes in float32";
  // Every tensor but the float32 input is bfloat16: the arena of the recipe's training step
  // is half of float32's, within the input and a layer's alignment.
  auto arena = [](DTypePolicy policy) {
    reset_layer_names();
    auto model = io::load_model_json(fixture_path("keras/parity_mixed_bfloat16/model.json"));
    for (Layer* layer : model->layers()) layer->set_dtype_policy(policy);
    model->compile(std::make_shared<optimizers::Adam>(), std::make_shared<losses::SparseCategoricalCrossentropy>());
    return double(model->compiled_step(256, true).arena_bytes());
  };
  const double ratio = arena(DTypePolicy::mixed_bfloat16) / arena(DTypePolicy::float32);
  EXPECT_GT(ratio, 0.45);
  EXPECT_LT(ratio, 0.55);
}

TEST(MixedBfloat16, Float16PoliciesAreRefusedSayingWhatToUse) {
  auto error_of = [](const nlohmann::json& dtype) {
    try {
      dtype_policy_from_config(dtype);
    } catch (const Error& error) {
      return error.message();
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("mixed_float16").find("not supported on CPUs (no float16 units); use 'mixed_bfloat16'"),
            std::string::npos);
  const nlohmann::json float64 = {{"class_name", "DTypePolicy"}, {"config", {{"name", "float64"}}}};
  EXPECT_NE(error_of(float64).find("dtype policy 'float64' is not supported"), std::string::npos);
  EXPECT_EQ(dtype_policy_from_config(nullptr), DTypePolicy::float32);
}

TEST(MixedBfloat16, AFewChannelFirstLayerComputesOnBfloat16InputsAndWeights) {
  // LeNet's first layer shape (1 -> 6, 5x5, 'same') runs Tenfold's few-channel kernel under
  // the policy (float32 sums of bfloat16 data): it must see the input and the kernel rounded
  // to bfloat16, as Keras' bfloat16 convolution does. Reference: sum of bfloat16(x) * bfloat16(w) in double, plus the bias, in bfloat16.
  // Products of two bfloat16 values are exact in float, so only the order of the float sum
  // differs: nearly every output rounds to the reference's bfloat16 value (with the kernel
  // unrounded, a third of them do not).
  if (!cpu_has_bfloat16_units()) GTEST_SKIP() << "this CPU has no bfloat16 units; mixed_bfloat16 computes in float32";
  reset_layer_names();
  set_random_seed(3);
  auto model = std::make_unique<models::Sequential>(std::vector<std::shared_ptr<Layer>>{
      layers::Input(Shape{9, 9, 1}),
      std::make_shared<layers::Conv2D>(layers::Conv2DOptions{.filters = 6, .kernel_size = {5, 5}, .padding = "same"})});
  model->set_dtype_policy(DTypePolicy::mixed_bfloat16);
  Layer& conv = *model->layers()[0];
  const Tensor kernel = testing::random_tensor({5, 5, 1, 6}, 4), bias = testing::random_tensor({6}, 5);
  conv.weights()[0]->assign(kernel);
  conv.weights()[1]->assign(bias);
  const Tensor x = testing::random_tensor({4, 9, 9, 1}, 6);
  const Tensor y = model->predict(x);
  auto rounded = [](float value) { return double(kernels::to_float(kernels::to_bfloat16(value))); };
  int64_t exact = 0, count = 0;
  for (int64_t n = 0; n < 4; ++n) {
    for (int64_t i = 0; i < 9; ++i) {
      for (int64_t j = 0; j < 9; ++j) {
        for (int64_t f = 0; f < 6; ++f) {
          double sum = 0;
          for (int64_t ki = 0; ki < 5; ++ki) {
            for (int64_t kj = 0; kj < 5; ++kj) {
              const int64_t row = i + ki - 2, column = j + kj - 2;
              if (row < 0 || row >= 9 || column < 0 || column >= 9) continue;
              sum += rounded(x.data<float>()[(n * 9 + row) * 9 + column]) *
                     rounded(kernel.data<float>()[(ki * 5 + kj) * 6 + f]);
            }
          }
          const double expected = rounded(float(sum + bias.data<float>()[f]));
          const double got = y.data<float>()[((n * 9 + i) * 9 + j) * 6 + f];
          EXPECT_NEAR(got, expected, std::ldexp(std::abs(expected), -7) + 1e-6);
          exact += got == expected;
          ++count;
        }
      }
    }
  }
  EXPECT_GT(double(exact), 0.95 * double(count));
}

TEST(MixedBfloat16, ConversionsRoundToNearestEven) {
  // Against the bit patterns numpy's ml_dtypes.bfloat16 (TensorFlow's and JAX's) gives.
  EXPECT_EQ(kernels::to_bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(kernels::to_bfloat16(1.00390625f).bits, 0x3f80);  // halfway to 0x3f81: even
  EXPECT_EQ(kernels::to_bfloat16(1.01171875f).bits, 0x3f82);  // halfway to 0x3f82 from 0x3f81: even
  EXPECT_EQ(kernels::to_bfloat16(-2.5f).bits, 0xc020);
  EXPECT_TRUE(std::isnan(kernels::to_float(kernels::to_bfloat16(std::nanf("")))));
  EXPECT_TRUE(std::isinf(kernels::to_float(kernels::to_bfloat16(INFINITY))));
  EXPECT_EQ(kernels::to_bfloat16(3.0e38f).bits, 0x7f62);
}

}  // namespace
}  // namespace tenfold
