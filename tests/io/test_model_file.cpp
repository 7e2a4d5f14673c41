// Keras .h5 model files: Keras' own files load with the same predictions and training resumes
// where Keras stopped; Tenfold's files load in Keras; damaged or hostile files are clear errors.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/random.h"
#include "distribute/strategy.h"
#include "io/hdf5.h"
#include "io/model_file.h"
#include "kernels/bfloat16.h"
#include "io/zip_archive.h"
#include "models/seed_cnn.h"
#include "losses/crossentropy.h"
#include "losses/elementwise.h"
#include "losses/loss.h"
#include "optimizers/adam.h"
#include "optimizers/rmsprop.h"
#include "support/check.h"
#include "support/process.h"
#include "support/npy.h"

namespace tenfold::io {
namespace {

using testing::error_of;

namespace fs = std::filesystem;
using testing::fixture_path;
using testing::read_npy;

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("tenfold_model_" + std::to_string(getpid()) + "_" + name);
}

// Keras' own files of one model, in both formats: .h5 and the Keras 3 .keras archive.
class KerasFiles : public ::testing::TestWithParam<std::string> {};

TEST_P(KerasFiles, LoadWithKerasPredictions) {
  auto model = load_model(fixture_path("models/small" + GetParam()));
  EXPECT_EQ(model->layers().size(), 5u);
  EXPECT_EQ(model->optimizer()->class_name(), "Adam");
  EXPECT_EQ(model->optimizer()->iterations(), 2);
  EXPECT_EQ(model->metric_names(), std::vector<std::string>{"accuracy"});
  Tensor predictions = model->predict(read_npy(fixture_path("models/x.npy")));
  EXPECT_TRUE(testing::all_close(predictions, read_npy(fixture_path("models/predictions.npy")), 1e-5, 1e-6));
}

TEST_P(KerasFiles, TrainingResumesWhereKerasStopped) {
  auto model = load_model(fixture_path("models/small" + GetParam()));
  auto logs = model->train_on_batch(read_npy(fixture_path("models/x.npy")), read_npy(fixture_path("models/y.npy")));
  double expected_loss = read_npy(fixture_path("models/next_loss.npy")).data<float>()[0];
  EXPECT_NEAR(logs.at("loss"), expected_loss, 1e-5 * expected_loss);
  Tensor kernel = model->layers()[3]->weights()[0]->read();
  EXPECT_TRUE(testing::all_close(kernel, read_npy(fixture_path("models/next_kernel.npy")), 1e-5, 1e-6));
}

INSTANTIATE_TEST_SUITE_P(Formats, KerasFiles, ::testing::Values(".h5", ".keras"));

// Keras' files of Functional models after 3 Adam steps (tools/make_keras_fixtures.py): a
// residual block with global average pooling ("residual"), a Sequential used as a layer
// ("nested", whose weights files nest the Sequential's layers), BatchNormalization
// ("batchnorm": predictions from the moving statistics, saved after the trainable weights),
// DepthwiseConv2D with a dilated grouped Conv2D ("mobile"), and ConvNeXt's layers ("convnext":
// Normalization's integer count, LayerScale of keras.applications, an op x + y), and shared
// layers ("shared": a nested model and Dense layers called twice).
class KerasFunctionalFiles : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(KerasFunctionalFiles, LoadWithKerasPredictionsAndOptimizerState) {
  const auto& [name, extension] = GetParam();
  auto model = load_model(fixture_path("keras/parity_" + name + "/model" + extension));
  EXPECT_EQ(model->class_name(), "Functional");
  EXPECT_EQ(model->name(), name);
  EXPECT_EQ(model->optimizer()->iterations(), 3);
  Tensor x = read_npy(fixture_path("keras/parity/x.npy")).slice_batch(0, 8);
  EXPECT_TRUE(testing::all_close(model->predict(x), read_npy(fixture_path("keras/parity_" + name + "/predictions.npy")),
                                 1e-5, 1e-6));
  // The optimizer state is Keras': the next step ends where Keras' fourth would, so compare
  // with the file's own slots instead, read back from a save.
  fs::path path = scratch("resaved" + extension);
  save_model(*model, path.string());
  auto again = load_model(path.string());
  fs::remove(path);
  for (size_t i = 0; i < model->trainable_weights().size(); ++i) {
    EXPECT_TRUE(testing::all_close(again->optimizer()->slot(i, 0), model->optimizer()->slot(i, 0), 0, 0));
  }
  for (size_t i = 0; i < model->weights().size(); ++i) {
    EXPECT_TRUE(testing::all_close(again->weights()[i]->read(), model->weights()[i]->read(), 0, 0));
  }
}

INSTANTIATE_TEST_SUITE_P(ModelsAndFormats, KerasFunctionalFiles,
                         ::testing::Combine(::testing::Values("residual", "nested", "shared", "batchnorm", "mobile", "convnext"),
                                            ::testing::Values(".h5", ".keras")));

// Keras 3 files saved the common ways. compile(optimizer="adam") leaves the optimizer out of
// the compile_config: Keras' load_model compiles with RMSprop and a warning, and so does
// Tenfold. A model compiled but never trained has no optimizer slots yet.
TEST(KerasFilesSavedTheCommonWays, StringOptimizerLoadsWithKerasDefault) {
  auto model = load_model(fixture_path("models/string_optimizer.keras"));
  ASSERT_NE(model->optimizer(), nullptr);
  EXPECT_EQ(model->optimizer()->class_name(), "RMSprop");
  EXPECT_EQ(model->optimizer()->iterations(), 0);
  Tensor x = read_npy(fixture_path("models/x.npy"));
  EXPECT_TRUE(testing::all_close(model->predict(x),
                                 read_npy(fixture_path("models/string_optimizer_predictions.npy")),
                                 1e-5, 1e-6));
  model->train_on_batch(x, read_npy(fixture_path("models/y.npy")));
  EXPECT_EQ(model->optimizer()->iterations(), 1);
}

// Every kind of Keras file (trained or not, string or object optimizer, a schedule with
// gradient accumulation, .h5 and .keras) evaluates as Keras' own evaluate of it.
TEST(KerasFilesSavedTheCommonWays, EvaluateAsKeras) {
  std::ifstream file(fixture_path("models/evaluations.json"));
  const nlohmann::json keras = nlohmann::json::parse(file);
  Tensor x = read_npy(fixture_path("models/x.npy")), y = read_npy(fixture_path("models/y.npy"));
  for (const auto& [name, expected] : keras.items()) {
    SCOPED_TRACE(name);
    auto results = load_model(fixture_path("models/" + name))->evaluate(x, y, 8, 0);
    EXPECT_EQ(results.size(), expected.size());
    for (const auto& [metric, value] : expected.items()) {
      ASSERT_EQ(results.count(metric), 1u) << metric;
      EXPECT_NEAR(results.at(metric), value.get<double>(), 1e-5 * std::abs(value.get<double>()) + 1e-6) << metric;
    }
  }
}

class UntrainedKerasFiles : public ::testing::TestWithParam<std::string> {};

TEST_P(UntrainedKerasFiles, LoadWithAnUntouchedOptimizerAndTrain) {
  auto model = load_model(fixture_path("models/untrained" + GetParam()));
  ASSERT_NE(model->optimizer(), nullptr);
  EXPECT_EQ(model->optimizer()->class_name(), "Adam");
  EXPECT_EQ(model->optimizer()->iterations(), 0);
  Tensor x = read_npy(fixture_path("models/x.npy"));
  EXPECT_TRUE(testing::all_close(model->predict(x),
                                 read_npy(fixture_path("models/untrained_predictions.npy")), 1e-5, 1e-6));
  model->train_on_batch(x, read_npy(fixture_path("models/y.npy")));
  EXPECT_EQ(model->optimizer()->iterations(), 1);
}

INSTANTIATE_TEST_SUITE_P(Formats, UntrainedKerasFiles, ::testing::Values(".h5", ".keras"));

TEST(KerasArchive, ErrorsInTheWeightsNameTheUsersFile) {
  // The config of one model with the weights of another: the error names the archive.
  fs::path mixed = scratch("mixed.keras");
  ZipReader small(fixture_path("models/small.keras"), "a .keras file");
  ZipReader untrained(fixture_path("models/untrained.keras"), "a .keras file");
  write_zip(mixed.string(), {{"config.json", small.read("config.json", 1 << 20)},
                             {"metadata.json", small.read("metadata.json", 1 << 20)},
                             {"model.weights.h5", untrained.read("model.weights.h5", 1 << 22)}});
  std::string error = error_of([&] { load_model(mixed.string()); });
  EXPECT_NE(error.find(mixed.string() + ":model.weights.h5"), std::string::npos) << error;
  EXPECT_EQ(error.find(fs::temp_directory_path().string() + "/tenfold-"), std::string::npos) << error;
  fs::remove(mixed);
}

TEST(KerasWeights, KerasWeightsFileLoadsIntoTheSameArchitecture) {
  auto model = load_model(fixture_path("models/small.h5"));
  auto fresh = models::Sequential::from_config(model->to_config());
  load_weights(*fresh, fixture_path("models/small.weights.h5"));
  Tensor x = read_npy(fixture_path("models/x.npy"));
  EXPECT_TRUE(testing::all_close(fresh->predict(x), read_npy(fixture_path("models/predictions.npy")), 1e-5, 1e-6));
  fs::path path = scratch("round.weights.h5");
  save_weights(*model, path.string());
  auto again = models::Sequential::from_config(model->to_config());
  load_weights(*again, path.string());
  EXPECT_TRUE(testing::all_close(again->predict(x), model->predict(x), 0, 0));
  EXPECT_NE(error_of([&] { save_weights(*model, "weights.h5"); }).find(".weights.h5"), std::string::npos);
  fs::remove(path);
}

/// The recipe's model, or with `parity_fixture` that fixture's model, trained one step.
std::unique_ptr<models::Model> trained_recipe_model(const std::string& parity_fixture = "") {
  set_random_seed(3);
  std::unique_ptr<models::Model> model =
      parity_fixture.empty() ? models::seed_cnn()
                             : load_model_json(fixture_path("keras/" + parity_fixture + "/model.json"));
  // Under the bfloat16 policy an Adam whose beta_2 bfloat16 holds below 1 (0.999 is 1.0 there).
  const bool bfloat16_variables = model->layers().front()->dtype_policy() == DTypePolicy::bfloat16;
  model->compile(bfloat16_variables ? std::make_shared<optimizers::Adam>(0.001f, 0.9f, 0.99f) : optimizers::get("adam"),
                 losses::get("sparse_categorical_crossentropy"), {"accuracy"});
  model->train_on_batch(read_npy(fixture_path("models/x.npy")), read_npy(fixture_path("models/y.npy")));
  return model;
}

TEST(KerasH5, RoundTripKeepsWeightsOptimizerStateAndKerasLayout) {
  auto model = trained_recipe_model();
  fs::path path = scratch("round_trip.h5");
  save_model(*model, path.string());
  auto loaded = load_model(path.string());
  for (size_t i = 0; i < model->weights().size(); ++i) {
    EXPECT_TRUE(testing::all_close(loaded->weights()[i]->read(), model->weights()[i]->read(), 0, 0));
    for (int slot = 0; slot < 2; ++slot) {
      EXPECT_TRUE(testing::all_close(loaded->optimizer()->slot(i, slot), model->optimizer()->slot(i, slot), 0, 0));
    }
  }
  EXPECT_EQ(loaded->optimizer()->iterations(), 1);
  std::string layout = testing::run_command("h5dump -H " + path.string()).output;
  for (const char* expected : {"GROUP \"model_weights\"", "GROUP \"optimizer_weights\"",
                               "ATTRIBUTE \"model_config\"", "ATTRIBUTE \"training_config\"",
                               "( 3, 3, 1, 32 )", "( 5408, 128 )", "DATASET \"sequential_dense_kernel_velocity\""}) {
    EXPECT_NE(layout.find(expected), std::string::npos) << expected << "\n" << layout.substr(0, 2000);
  }
  // Loaded inside a strategy's scope, the model trains with that strategy.
  auto strategy = distribute::Strategy::mirrored(distribute::split_cpu(2));
  {
    auto scope = strategy->scope();
    EXPECT_EQ(load_model(path.string())->strategy().num_replicas_in_sync(), 2);
  }
  fs::remove(path);
}

// Tenfold's files of the recipe's model (Sequential), a residual one (Functional) and a
// Sequential used as a layer of a Functional model.
class TenfoldFiles : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  std::string fixture() const { return std::get<0>(GetParam()); }
  std::string extension() const { return std::get<1>(GetParam()); }
};

TEST(TenfoldFiles, LoadInKerasWithTenfoldsPredictions) {
  // Every model and format of the ModelsAndFormats cases below, loaded by one Python process.
  const char* python = std::getenv("TENFOLD_KERAS_PYTHON");
  if (python && !fs::exists(python)) GTEST_SKIP() << python << " does not exist: Keras was not installed";
  std::string command = std::string(python ? python : "python3").append(" ").append(TENFOLD_TESTS_DIR).append("/io/keras_predict.py");
  // Keras' predictions file, Tenfold's predictions, and whether the model computes in bfloat16
  // (mixed_bfloat16, bfloat16: Keras' predictions are then bfloat16 values, which shows it
  // loaded the policy, within 2^-7 of Tenfold's).
  struct Case {
    fs::path predictions;
    Tensor expected;
    bool bfloat16;
  };
  std::vector<Case> cases;
  std::vector<fs::path> files;
  for (std::string fixture : {"", "parity_residual", "parity_nested", "parity_shared", "parity_batchnorm", "parity_mobile", "parity_convnext",
                              "parity_mixed_bfloat16_conv_stack", "parity_bfloat16_conv_stack"}) {
    for (std::string extension : {".h5", ".keras"}) {
      auto model = trained_recipe_model(fixture);
      // Built with append: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string here.
      const std::string name = std::string(fixture.empty() ? "recipe" : fixture).append(extension);
      fs::path path = scratch(std::string("for_keras_").append(name));
      fs::path predictions = scratch(std::string("keras_predictions_").append(name).append(".npy"));
      save_model(*model, path.string());
      command.append(" ").append(path.string()).append(" ").append(fixture_path("models/x.npy"));
      command.append(" ").append(predictions.string());
      cases.push_back({predictions, model->predict(read_npy(fixture_path("models/x.npy"))),
                       model->layers().front()->dtype_policy() != DTypePolicy::float32});
      files.push_back(path);
    }
  }
  testing::CommandResult result = testing::run_command(command);
  for (const fs::path& path : files) fs::remove(path);
  if (result.exit_code == 77) GTEST_SKIP() << result.output;
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const Case& each : cases) {
    Tensor keras = read_npy(each.predictions.string());
    if (each.bfloat16) {
      Tensor rounded = keras.clone();
      kernels::round_to_bfloat16(rounded.data<float>(), rounded.data<float>(), rounded.num_elements());
      EXPECT_TRUE(testing::all_close(keras, rounded, 0, 0)) << each.predictions << ": not computed in bfloat16";
    }
    EXPECT_TRUE(testing::all_close(keras, each.expected, each.bfloat16 ? 0 : 1e-5, each.bfloat16 ? 1.0 / 128 : 1e-6))
        << each.predictions << "\n" << result.output;
    fs::remove(each.predictions);
  }
}

TEST_P(TenfoldFiles, RoundTripInTenfold) {
  auto model = trained_recipe_model(fixture());
  fs::path path = scratch("round" + extension());
  save_model(*model, path.string());
  auto loaded = load_model(path.string());
  EXPECT_EQ(loaded->class_name(), model->class_name());
  EXPECT_EQ(loaded->to_config(), model->to_config());
  for (size_t i = 0; i < model->weights().size(); ++i) {
    EXPECT_TRUE(testing::all_close(loaded->weights()[i]->read(), model->weights()[i]->read(), 0, 0));
  }
  for (size_t i = 0; i < model->trainable_weights().size(); ++i) {
    EXPECT_TRUE(testing::all_close(loaded->optimizer()->slot(i, 1), model->optimizer()->slot(i, 1), 0, 0));
  }
  EXPECT_EQ(loaded->optimizer()->iterations(), 1);
  fs::remove(path);
}

TEST(TenfoldFiles, LossesWeightsAndMetricsPerOutputRoundTrip) {
  for (std::string extension : {".h5", ".keras"}) {
    auto model = load_model_json(fixture_path("keras/parity_two_outputs/model.json"));
    model->compile(optimizers::get("adam"), {{"digit", losses::get("sparse_categorical_crossentropy")}, {"bright", losses::get("mse")}},
                   {{"digit", 1.0}, {"bright", 0.5}}, {{"digit", {"accuracy"}}});
    fs::path path = scratch("two_outputs" + extension);
    save_model(*model, path.string());
    auto loaded = load_model(path.string());
    fs::remove(path);
    ASSERT_EQ(loaded->output_training().size(), 2u) << extension;
    EXPECT_EQ(loaded->output_names(), (std::vector<std::string>{"digit", "bright"}));
    EXPECT_EQ(loaded->output_training()[0].loss->name(), "sparse_categorical_crossentropy");
    EXPECT_EQ(loaded->output_training()[1].loss->name(), "mean_squared_error");
    EXPECT_EQ(loaded->output_training()[1].weight, 0.5);
    EXPECT_EQ(loaded->output_training()[0].metrics, std::vector<nlohmann::json>{"accuracy"});
    EXPECT_TRUE(loaded->output_training()[1].metrics.empty());
  }
}

TEST(TenfoldFiles, LossArgumentsRoundTrip) {
  for (std::string extension : {".h5", ".keras"}) {
    auto model = load_model_json(fixture_path("keras/parity_two_outputs/model.json"));
    model->compile(optimizers::get("adam"),
                   {{"digit", std::make_shared<losses::CategoricalCrossentropy>(true, 0.1)},
                    {"bright", std::make_shared<losses::Huber>(0.5)}});
    fs::path path = scratch("loss_arguments" + extension);
    save_model(*model, path.string());
    auto loaded = load_model(path.string());
    fs::remove(path);
    EXPECT_EQ(loaded->output_training()[0].loss->get_config(), model->output_training()[0].loss->get_config()) << extension;
    EXPECT_EQ(loaded->output_training()[1].loss->get_config().at("delta"), 0.5) << extension;
  }
}

INSTANTIATE_TEST_SUITE_P(ModelsAndFormats, TenfoldFiles,
                         ::testing::Combine(::testing::Values("", "parity_residual", "parity_nested", "parity_shared",
                                                              "parity_batchnorm", "parity_mobile", "parity_convnext"),
                                            ::testing::Values(".h5", ".keras")));

TEST(OptimizerState, RMSpropWithMomentumRoundTripsInBothFormats) {
  // Keras lists RMSprop's velocities first, then its momentums (not interleaved as Adam's).
  for (std::string extension : {".h5", ".keras"}) {
    set_random_seed(4);
    auto model = models::seed_cnn();
    model->compile(std::make_shared<optimizers::RMSprop>(0.001f, 0.9f, 0.5f), losses::get("sparse_categorical_crossentropy"), {});
    model->train_on_batch(read_npy(fixture_path("models/x.npy")), read_npy(fixture_path("models/y.npy")));
    fs::path path = scratch("rmsprop" + extension);
    save_model(*model, path.string());
    auto loaded = load_model(path.string());
    EXPECT_EQ(loaded->optimizer()->class_name(), "RMSprop");
    for (size_t i = 0; i < model->weights().size(); ++i) {
      for (int slot = 0; slot < 2; ++slot) {
        EXPECT_TRUE(testing::all_close(loaded->optimizer()->slot(i, slot), model->optimizer()->slot(i, slot), 0, 0))
            << extension << " weight " << i << " slot " << slot;
      }
    }
    fs::remove(path);
  }
}

TEST(OptimizerState, EveryOptimizersStateRoundTripsInBothFormats) {
  const nlohmann::json scheduled_adam = {
      {"class_name", "Adam"},
      {"config", {{"amsgrad", true}, {"gradient_accumulation_steps", 2},
                  {"learning_rate", {{"class_name", "CosineDecay"},
                                     {"config", {{"initial_learning_rate", 0.01}, {"decay_steps", 10}}}}}}}};
  const nlohmann::json centered_rmsprop = {{"class_name", "RMSprop"}, {"config", {{"centered", true}, {"momentum", 0.5}}}};
  std::vector<std::shared_ptr<optimizers::Optimizer>> all;
  for (std::string name : {"adamw", "adamax", "adagrad", "lion", "nadam", "adadelta"}) all.push_back(optimizers::get(name));
  all.push_back(optimizers::from_config(scheduled_adam));
  all.push_back(optimizers::from_config(centered_rmsprop));
  for (const auto& optimizer : all) {
    for (std::string extension : {".h5", ".keras"}) {
      SCOPED_TRACE(optimizer->class_name() + extension);
      set_random_seed(4);
      auto model = models::seed_cnn();
      // A copy per format: training moves the optimizer's state.
      model->compile(optimizers::from_config({{"class_name", optimizer->class_name()}, {"config", optimizer->get_config()}}),
                     losses::get("sparse_categorical_crossentropy"), {});
      for (int step = 0; step < 3; ++step) {
        model->train_on_batch(read_npy(fixture_path("models/x.npy")), read_npy(fixture_path("models/y.npy")));
      }
      fs::path path = scratch(optimizer->class_name() + extension);
      save_model(*model, path.string());
      auto loaded = load_model(path.string());
      fs::remove(path);
      EXPECT_EQ(loaded->optimizer()->get_config(), model->optimizer()->get_config());
      EXPECT_EQ(loaded->optimizer()->iterations(), 3);
      std::vector<optimizers::KerasVariable> expected = model->optimizer()->keras_variables(),
                                             actual = loaded->optimizer()->keras_variables();
      ASSERT_EQ(actual.size(), expected.size());
      for (size_t v = 0; v < expected.size(); ++v) {
        EXPECT_EQ(actual[v].name, expected[v].name);
        EXPECT_TRUE(testing::all_close(*actual[v].value, *expected[v].value, 0, 0)) << expected[v].name << " " << v;
      }
    }
  }
}

// Keras' files of Nadam on a CosineDecay schedule with warmup and gradient_accumulation_steps
// 2, after 3 steps: the optimizer variables are iteration (no learning_rate), the gradient
// accumulators, the slots and Nadam's u_product. The next step lands on Keras' weights only
// if all of them were read in place.
TEST(KerasArchive, AugmentationLayersLoadAndPassImagesThroughAtInference) {
  // Keras records each augmentation layer's call with training=True; the model's own flag wins.
  auto model = load_model(fixture_path("models/augmented.keras"));
  EXPECT_EQ(model->layers()[0]->class_name(), "RandomFlip");
  EXPECT_TRUE(testing::all_close(model->predict(read_npy(fixture_path("models/x.npy"))),
                                 read_npy(fixture_path("models/augmented_predictions.npy")), 1e-5, 1e-6));
}

class KerasScheduledFiles : public ::testing::TestWithParam<std::string> {};

TEST_P(KerasScheduledFiles, TrainingResumesWithScheduleAccumulatorsAndNadamState) {
  auto model = load_model(fixture_path("models/scheduled" + GetParam()));
  ASSERT_NE(model->optimizer()->learning_rate_schedule(), nullptr);
  EXPECT_EQ(model->optimizer()->class_name(), "Nadam");
  EXPECT_EQ(model->optimizer()->iterations(), 3);
  model->train_on_batch(read_npy(fixture_path("models/x.npy")), read_npy(fixture_path("models/y.npy")));
  EXPECT_TRUE(testing::all_close(model->layers()[1]->weights()[0]->read(),
                                 read_npy(fixture_path("models/scheduled_next_kernel.npy")), 1e-5, 1e-6));
}

INSTANTIATE_TEST_SUITE_P(Formats, KerasScheduledFiles, ::testing::Values(".h5", ".keras"));

TEST(KerasArchive, DamagedArchivesAreClearErrors) {
  fs::path text = scratch("text.keras");
  std::ofstream(text) << "not a zip";
  EXPECT_NE(error_of([&] { load_model(text.string()); }).find("not a zip archive"), std::string::npos);
  fs::path cut = scratch("cut.keras");
  auto size = fs::file_size(fixture_path("models/small.keras"));
  for (double fraction : {0.05, 0.5, 0.95, 0.999}) {
    fs::copy_file(fixture_path("models/small.keras"), cut, fs::copy_options::overwrite_existing);
    fs::resize_file(cut, uintmax_t(double(size) * fraction));
    EXPECT_NE(error_of([&] { load_model(cut.string()); }), "(no error)") << fraction;
  }
  fs::remove(text);
  fs::remove(cut);
}

TEST(KerasH5, SavingReplacesTheOldFileOnlyWhenTheNewOneIsComplete) {
  auto model = trained_recipe_model();
  fs::path path = scratch("atomic.h5");
  save_model(*model, path.string());
  auto size = fs::file_size(path);
  // A save that fails midway (an unwritable name inside the file is not possible to force
  // portably; a model that is not built fails before writing) leaves the old file intact.
  models::Sequential empty;
  EXPECT_NE(error_of([&] { save_model(empty, path.string()); }).find("not built"), std::string::npos);
  EXPECT_EQ(fs::file_size(path), size);
  load_model(path.string());
  for (const auto& entry : fs::directory_iterator(path.parent_path())) {
    EXPECT_EQ(entry.path().string().find(path.string() + ".tmp"), std::string::npos) << "left " << entry.path();
  }
  fs::remove(path);
}

/// A copy of Tenfold's own file for the recipe's model, opened for editing with HDF5.
struct EditableFile {
  fs::path path;
  hid_t file = -1;
  std::string kernel, other_kernel;  // the Dense layers' kernels' paths
  explicit EditableFile(const std::string& name) : path(scratch(name)) {
    auto model = trained_recipe_model();
    save_model(*model, path.string());
    auto kernel_of = [&](size_t layer) {
      std::string layer_name = model->layers()[layer]->name();
      return "/model_weights/" + layer_name + "/" + model->name() + "/" + layer_name + "/kernel";
    };
    kernel = kernel_of(3);
    other_kernel = kernel_of(4);
    file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  }
  /// The group holding the first Dense kernel, its kernel deleted.
  Hdf5Object without_kernel() {
    H5Ldelete(file, kernel.c_str(), H5P_DEFAULT);
    return Hdf5Object(H5Gopen2(file, kernel.substr(0, kernel.rfind('/')).c_str(), H5P_DEFAULT), "");
  }
  void set_config(const std::string& attribute, const std::string& json) {
    H5Adelete(file, attribute.c_str());
    Hdf5Object root(H5Oopen(file, "/", H5P_DEFAULT), "");
    root.write_string_attribute(attribute, json);
  }
  std::string load_error() {
    H5Fclose(file);
    file = -1;
    return error_of([&] { load_model(path.string()); });
  }
  ~EditableFile() {
    if (file >= 0) H5Fclose(file);
    fs::remove(path);
  }
};

TEST(KerasH5BadFiles, MissingNotHdf5AndTruncatedFiles) {
  EXPECT_NE(error_of([] { load_model("/nonexistent/model.h5"); }).find("does not exist"), std::string::npos);
  EXPECT_NE(error_of([] { load_model("model.json"); }).find("use .keras (Keras 3), .h5"), std::string::npos);
  fs::path text = scratch("text.h5");
  std::ofstream(text) << "not an hdf5 file";
  EXPECT_NE(error_of([&] { load_model(text.string()); }).find("not an HDF5 file"), std::string::npos);
  fs::remove(text);

  auto model = trained_recipe_model();
  fs::path whole = scratch("whole.h5"), cut = scratch("cut.h5");
  save_model(*model, whole.string());
  auto size = fs::file_size(whole);
  for (double fraction : {0.001, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.9999}) {
    fs::copy_file(whole, cut, fs::copy_options::overwrite_existing);
    fs::resize_file(cut, uintmax_t(double(size) * fraction));
    std::string message = error_of([&] { load_model(cut.string()); });
    EXPECT_NE(message, "(no error)") << "truncated to " << fraction;
    EXPECT_NE(message.find(cut.string()), std::string::npos) << message;
  }
  fs::remove(whole);
  fs::remove(cut);
}

// Found by tests/fuzz/run.sh: a damaged global heap under a string attribute sends libhdf5
// 1.10 spinning in H5HG_read. The reader is stopped after 10 s (this file's allowance), an error.
TEST(KerasH5BadFiles, AFileThatSpinsLibhdf5IsStoppedAfterItsAllowance) {
  std::string path = fixture_path("models/hostile_heap_spins_libhdf5.h5");
  std::string message = error_of([&] { load_model(path); });
  EXPECT_NE(message.find(path + ": reading it took over 10 s: the file is damaged or hostile"), std::string::npos)
      << message;
}

TEST(KerasH5BadFiles, UnknownAndLambdaLayersAreRefused) {
  EditableFile lambda("lambda.h5");
  lambda.set_config("model_config",
                    R"({"class_name": "Sequential", "config": {"name": "s", "layers": [
                         {"class_name": "InputLayer", "config": {"batch_shape": [null, 4]}},
                         {"class_name": "Lambda", "config": {"name": "l", "function": "evil"}}]}})");
  std::string message = lambda.load_error();
  EXPECT_NE(message.find("Lambda"), std::string::npos) << message;
  EditableFile subclassed("subclassed.h5");
  subclassed.set_config("model_config", R"({"class_name": "MyModel", "config": {}})");
  message = subclassed.load_error();
  EXPECT_NE(message.find("model class 'MyModel' is not supported"), std::string::npos) << message;
  EditableFile functional("functional.h5");
  functional.set_config("model_config", R"({"class_name": "Functional", "config": {}})");
  message = functional.load_error();
  EXPECT_NE(message.find("Functional model config has no list of layers"), std::string::npos) << message;
}

TEST(KerasH5BadFiles, DeepOrMalformedConfigsAreRefused) {
  EditableFile deep("deep.h5");
  deep.set_config("model_config", std::string(100000, '[') + std::string(100000, ']'));
  std::string message = deep.load_error();
  EXPECT_NE(message.find("nests deeper than 64 levels"), std::string::npos) << message;
  EditableFile broken("broken.h5");
  broken.set_config("model_config", "{\"class_name\": \"Sequential\", ");
  message = broken.load_error();
  EXPECT_NE(message.find("is not valid JSON"), std::string::npos) << message;
}

TEST(KerasH5BadFiles, ShapesDtypesAndMissingWeightsAreChecked) {
  EditableFile shape("shape.h5");
  std::vector<float> values(12);
  shape.without_kernel().write_dataset("kernel", Shape{3, 4}, values.data());
  std::string message = shape.load_error();
  EXPECT_NE(message.find("has shape (3, 4) but the model config needs (5408, 128)"), std::string::npos) << message;

  EditableFile integer("integer.h5");
  integer.without_kernel().write_int64_scalar("kernel", 7);
  message = integer.load_error();
  EXPECT_NE(message.find("is not floating point"), std::string::npos) << message;

  EditableFile missing("missing.h5");
  missing.without_kernel();
  message = missing.load_error();
  EXPECT_NE(message.find("kernel: missing dataset"), std::string::npos) << message;
}

TEST(KerasH5BadFiles, CyclesAndOversizedDatasetsAreRefused) {
  EditableFile cycle("cycle.h5");
  H5Lcreate_hard(cycle.file, "/model_weights", cycle.file, "/model_weights/loop", H5P_DEFAULT, H5P_DEFAULT);
  std::string message = cycle.load_error();
  EXPECT_NE(message.find("nests groups deeper than 32"), std::string::npos) << message;

  EditableFile huge("huge.h5");
  Hdf5Object group = huge.without_kernel();
  hsize_t dims[2] = {hsize_t(1) << 40, 128};  // declared, never written: no storage behind it
  hid_t space = H5Screate_simple(2, dims, nullptr);
  hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
  hsize_t chunk[2] = {1, 128};
  H5Pset_chunk(plist, 2, chunk);
  hid_t dataset = H5Dcreate2(group.id(), "kernel", H5T_IEEE_F32LE, space, H5P_DEFAULT, plist, H5P_DEFAULT);
  H5Dclose(dataset);
  H5Pclose(plist);
  H5Sclose(space);
  message = huge.load_error();
  EXPECT_NE(message.find("declares"), std::string::npos) << message;
}

TEST(KerasH5BadFiles, SoftAndExternalLinksAreRefused) {
  EditableFile soft("soft.h5");
  soft.without_kernel();
  H5Lcreate_soft(soft.other_kernel.c_str(), soft.file, soft.kernel.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  std::string message = soft.load_error();
  EXPECT_NE(message.find("soft or external link"), std::string::npos) << message;

  EditableFile external("external.h5");
  external.without_kernel();
  H5Lcreate_external("/etc/other.h5", "/data", external.file, external.kernel.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  message = external.load_error();
  EXPECT_NE(message.find("soft or external link"), std::string::npos) << message;
}

}  // namespace
}  // namespace tenfold::io
