// keras.applications' models as Keras users load them: made locally by Keras (weights None,
// tests/io/keras_applications.py) and saved as .keras, each loads in Tenfold with Keras'
// parameter counts and predictions, trains one SGD step to Keras' weights, and Tenfold's own
// file of it loads back in Keras with Tenfold's predictions.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>

#include <nlohmann/json.hpp>

#include "io/model_file.h"
#include "models/model.h"
#include "support/check.h"
#include "support/npy.h"
#include "support/process.h"

namespace tenfold::io {
namespace {

namespace fs = std::filesystem;
using testing::read_npy;

/// Each model, and whether its training step is compared with Keras'. Not compared:
/// - DenseNet121: its layers are all in the others (BatchNormalization, Concatenate,
///   AveragePooling2D), and XLA takes most of a minute to compile Keras' step of it.
/// - ResNet50: at 32x32 its last BatchNormalizations normalise 8 or 32 rows with epsilon
///   1.001e-5, and one step's weights in float32 are far from float64 in Keras too (measured
///   against a float64 copy of the model in Keras/TensorFlow: Keras' float32 up to 0.098,
///   Tenfold's up to 0.14); no float32 tolerance holds.
/// - MobileNetV2: the same conditioning, through ReLU's kink. Its last BatchNormalizations
///   normalise 8 rows, so one step hangs on the sign of every ReLU input there, and with about
///   50,000 of them some lie within float32's rounding of 0 (measured: Conv_1_bn's output at
///   row 4, channel 1078 is -8.4e-6 in float64 and +2.5e-5 in Tenfold, so out_relu passes a
///   gradient float64 blocks; the beta gradient moves by 4.5e-3 and earlier weights by up to
///   2e-2 through the few-row normalizations). Tenfold's training-mode forward of all 155
///   layers is as close to float64 as Keras' float32 (both within 8.4e-5 relative); over 8
///   input seeds the smallest such ReLU input was below 5e-6 every time.
const std::vector<std::pair<std::string, bool>> kApplications = {
    {"ResNet50", false},    {"MobileNetV2", false},   {"VGG16", true},
    {"DenseNet121", false}, {"EfficientNetB0", true}, {"ConvNeXtTiny", true}};

/// Runs the commands at once (Keras uses one core at a time here; CI has two) and returns
/// their results in order.
std::vector<testing::CommandResult> run_side_by_side(const std::vector<std::string>& commands) {
  std::vector<std::future<testing::CommandResult>> running;
  for (const std::string& command : commands) {
    running.push_back(std::async(std::launch::async, [command] { return testing::run_command(command); }));
  }
  std::vector<testing::CommandResult> results;
  for (auto& result : running) results.push_back(result.get());
  return results;
}

TEST(KerasApplications, LoadPredictTrainOneStepAndLoadBackInKeras) {
  const char* python = std::getenv("TENFOLD_KERAS_PYTHON");
  if (python && !fs::exists(python)) GTEST_SKIP() << python << " does not exist: Keras was not installed";
  const std::string keras_python = python ? python : "python3";
  const fs::path directory = fs::temp_directory_path() / ("tenfold_applications_" + std::to_string(getpid()));
  // Three Keras processes: the models that only predict (NumPy backend, seconds), and each
  // half of the trained ones (JAX, tens of seconds each). Built with append: GCC 12 warns
  // falsely (-Wrestrict) on "literal" + std::string chains.
  const std::string script = std::string(keras_python).append(" ").append(TENFOLD_TESTS_DIR);
  std::vector<std::string> make(3, std::string(script).append("/io/keras_applications.py ").append(directory.string()));
  std::vector<std::string> load_back(2, std::string(script).append("/io/keras_predict.py"));
  size_t trained = 0;
  for (const auto& [name, step] : kApplications) {
    if (step) make[1 + trained++ % 2].append(" ").append(name);
    else make[0].append(" ").append(name).append(":predict");
  }
  for (const testing::CommandResult& made : run_side_by_side(make)) {
    if (made.exit_code == 77) GTEST_SKIP() << made.output;
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }

  std::vector<std::pair<fs::path, Tensor>> tenfold_predictions;  // Keras' file of them, Tenfold's
  for (size_t m = 0; m < kApplications.size(); ++m) {
    const auto& [name, step] = kApplications[m];
    SCOPED_TRACE(name);
    const fs::path model_directory = directory / name;
    auto model = load_model((model_directory / "model.keras").string());
    // summary()'s counts.
    nlohmann::json params = nlohmann::json::parse(std::ifstream(model_directory / "params.json"));
    int64_t trainable = 0;
    for (const Variable* weight : model->trainable_weights()) trainable += weight->shape().num_elements();
    EXPECT_EQ(trainable, params.at("trainable").get<int64_t>());
    EXPECT_EQ(model->count_params() - trainable, params.at("non_trainable").get<int64_t>());

    Tensor x = read_npy((model_directory / "x.npy").string());
    EXPECT_TRUE(testing::all_close(model->predict(x), read_npy((model_directory / "predictions.npy").string()), 1e-4, 1e-4));
    if (step) {
      model->train_on_batch(x, read_npy((model_directory / "y.npy").string()));
      for (Layer* layer : model->layers()) {
        std::vector<Variable*> weights = layer->weights();
        for (size_t i = 0; i < weights.size(); ++i) {
          const fs::path expected =
              model_directory / "after_step" / std::string(layer->name()).append(".").append(std::to_string(i)).append(".npy");
          EXPECT_TRUE(testing::all_close(weights[i]->read(), read_npy(expected.string()), 1e-4, 1e-4))
              << layer->name() << "/" << weights[i]->name();
        }
      }
    }
    const fs::path saved = model_directory / "tenfold.keras", keras_predictions = model_directory / "keras.npy";
    save_model(*model, saved.string());
    load_back[m % 2].append(" ").append(saved.string()).append(" ").append((model_directory / "x.npy").string());
    load_back[m % 2].append(" ").append(keras_predictions.string());
    tenfold_predictions.emplace_back(keras_predictions, model->predict(x));
  }
  for (const testing::CommandResult& loaded : run_side_by_side(load_back)) {
    ASSERT_EQ(loaded.exit_code, 0) << loaded.output;
  }
  for (const auto& [path, expected] : tenfold_predictions) {
    EXPECT_TRUE(testing::all_close(read_npy(path.string()), expected, 1e-4, 1e-4)) << path;
  }
  fs::remove_all(directory);
}

}  // namespace
}  // namespace tenfold::io
