// Every tenfold command and every option its --help documents, run as a user runs them; and
// the recipe as a C++ program (examples/recipe.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "datasets/png.h"
#include "support/check.h"
#include "support/process.h"
#include "support/tenfold_command.h"

namespace tenfold {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::number_after;
using testing::tenfold;

fs::path scratch(const std::string& name) {
  fs::path path = fs::temp_directory_path() / ("tenfold_commands_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(path);
  return path;
}

/// The options a command's --help documents.
std::set<std::string> documented_options(const std::string& command) {
  CommandResult help = tenfold(command + " --help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  std::set<std::string> options;
  std::regex option_line(R"(^  (--[a-z-]+))");
  std::istringstream lines(help.output);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, option_line)) options.insert(match[1]);
  }
  return options;
}

TEST(Commands, UsageListsEveryCommand) {
  CommandResult usage = tenfold("--help");
  EXPECT_EQ(usage.exit_code, 0);
  for (const char* command : {"devices", "train", "evaluate", "predict", "summary", "plot"}) {
    EXPECT_NE(usage.output.find(std::string("  ") + command + " "), std::string::npos) << command;
  }
  EXPECT_EQ(tenfold("").exit_code, 2);
  EXPECT_EQ(tenfold("fly").exit_code, 2);
}

// Each command's --help lists exactly the options the tests exercise (here, and the data and
// compile options in test_user_data.cpp).
TEST(Commands, HelpDocumentsTheOptionsTested) {
  const std::set<std::string> cluster = {"--devices", "--workers", "--connect-timeout"};
  auto with_cluster = [&](std::set<std::string> options) {
    options.insert(cluster.begin(), cluster.end());
    return options;
  };
  EXPECT_EQ(documented_options("devices"), cluster);
  EXPECT_EQ(documented_options("train"),
            with_cluster({"--data", "--labels", "--label", "--categorical", "--model", "--loss", "--optimizer",
                          "--learning-rate", "--metrics", "--freeze", "--class-weight", "--epochs", "--batch-size",
                          "--per-replica-batch", "--validation-split", "--validation-data", "--seed", "--save",
                          "--backup-dir", "--backup-freq", "--history", "--log-dir", "--update-freq", "--verbose",
                          "--memory-limit", "--dtype-policy"}));
  EXPECT_EQ(documented_options("evaluate"),
            with_cluster({"--data", "--labels", "--label", "--categorical", "--batch-size", "--verbose"}));
  EXPECT_EQ(documented_options("predict"), std::set<std::string>({"--data", "--labels", "--label", "--categorical",
                                                                  "--count", "--output", "--batch-size"}));
  EXPECT_EQ(documented_options("summary"), std::set<std::string>{"--batch-size"});
  EXPECT_EQ(documented_options("plot"), std::set<std::string>({"--output", "--width", "--height"}));
}

// One training run with every option of train, then the saved model through evaluate, predict
// and summary. The other runs of train (--model, --workers, bad values, mpirun, resuming a
// backup) are in test_train_recipe and test_resume.
TEST(Commands, TrainWithEveryOptionThenEvaluatePredictSummary) {
  fs::path model = scratch("model.keras"), history = scratch("history.json"), logs = scratch("logs"),
           backups = scratch("backups"), data = scratch("data"), predictions = scratch("predictions.csv");
  fs::create_directories(data);
  for (const auto& file : fs::directory_iterator("/usr/share/datasets/fashion-mnist")) {
    fs::create_symlink(file.path(), data / file.path().filename());
  }
  CommandResult train = tenfold(
      "train --data " + data.string() + " --model seed-cnn --epochs 1 --per-replica-batch 128 --devices 2 "
      "--seed 5 --verbose 2 --save " + model.string() + " --history " + history.string() + " --log-dir " +
      logs.string() + " --update-freq 100 --backup-dir " + backups.string() + " --backup-freq 50 "
      "--memory-limit 4G --connect-timeout 5");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_NE(train.output.find("Number of replicas: 2"), std::string::npos) << train.output;
  EXPECT_NE(train.output.find("235/235 - "), std::string::npos) << train.output;  // 60000 / 256, one line
  EXPECT_EQ(train.output.find('\r'), std::string::npos) << "no progress bar when not on a terminal";
  const double test_loss = number_after(train.output, "Test loss: ");
  const double test_accuracy = number_after(train.output, "test accuracy: ");
  EXPECT_GT(test_loss, 0);
  EXPECT_GE(test_accuracy, 0.84);
  auto logged = nlohmann::json::parse(std::ifstream(history));
  EXPECT_EQ(logged.at("history").at("val_accuracy").size(), 1u);
  EXPECT_NEAR(logged.at("history").at("val_accuracy")[0].get<double>(), test_accuracy, 5e-5);
  // The epoch's wall time, validation included: at least what its steps took (the line's
  // ms/step, rounded to a millisecond, is the time of a step after the first).
  ASSERT_EQ(logged.at("epoch_seconds").size(), 1u);
  const double epoch_seconds = logged.at("epoch_seconds")[0].get<double>();
  const size_t per_step = train.output.find("ms/step");
  ASSERT_NE(per_step, std::string::npos) << train.output;
  const double step_ms = std::stod(train.output.substr(train.output.rfind(' ', per_step) + 1));
  EXPECT_GE(epoch_seconds, 234 * (step_ms - 0.5) * 1e-3) << train.output;
  EXPECT_LT(epoch_seconds, 600);
  EXPECT_TRUE(fs::is_directory(logs / "train") && fs::is_directory(logs / "validation"));
  ASSERT_TRUE(fs::is_directory(backups));
  EXPECT_TRUE(fs::is_empty(backups)) << "a finished run deletes its backups, as Keras does";

  CommandResult evaluate = tenfold("evaluate " + model.string() + " --data " + data.string() +
                                   " --batch-size 1000 --verbose 0 --devices 1 --connect-timeout 5");
  ASSERT_EQ(evaluate.exit_code, 0) << evaluate.output;
  EXPECT_NEAR(number_after(evaluate.output, "test accuracy: "), test_accuracy, 1e-9) << evaluate.output;
  EXPECT_NEAR(number_after(evaluate.output, "Test loss: "), test_loss, 2e-4) << evaluate.output;

  CommandResult predict = tenfold("predict " + model.string() + " --data " + data.string() +
                                  " --count 3 --batch-size 100 --output " + predictions.string());
  ASSERT_EQ(predict.exit_code, 0) << predict.output;
  EXPECT_NE(predict.output.find("sample 2: predicted "), std::string::npos) << predict.output;
  EXPECT_EQ(predict.output.find("sample 3: "), std::string::npos) << predict.output;
  EXPECT_NEAR(number_after(predict.output, "Predicted 10000 samples: "), test_accuracy, 1e-9) << predict.output;
  std::ifstream csv(predictions);
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "sample,label,predicted,p0,p1,p2,p3,p4,p5,p6,p7,p8,p9");
  int rows = 0, matches = 0;
  while (std::getline(csv, line)) {
    int sample = 0, label = 0, predicted = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%d,%d,%d", &sample, &label, &predicted), 3) << line;
    EXPECT_EQ(sample, rows++);
    matches += label == predicted;
  }
  EXPECT_EQ(rows, 10000);
  EXPECT_NEAR(matches / 10000.0, test_accuracy, 1e-9);

  CommandResult summary = tenfold("summary " + model.string());
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("│ conv2d (Conv2D)                 │ (None, 26, 26, 32)     │           320 │"),
            std::string::npos)
      << summary.output;
  // The model's 693,962 and Adam's: 2 slots per parameter, its iteration count and learning rate.
  EXPECT_NE(summary.output.find(" Total params: 2,081,888 (7.94 MB)\n"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find(" Optimizer params: 1,387,926 (5.29 MB)\n"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("optimizer Adam (learning rate 0.001, 235 steps taken)"), std::string::npos)
      << summary.output;
  CommandResult json_summary = tenfold("summary " + testing::fixture_path("models/small_cnn.json"));
  ASSERT_EQ(json_summary.exit_code, 0) << json_summary.output;
  EXPECT_NE(json_summary.output.find("(None, 26, 26, 8)"), std::string::npos) << json_summary.output;
  // The arena holds activations and gradients: twice the batch, twice the bytes.
  auto arena_mib = [&](int batch) {
    CommandResult result = tenfold("summary " + testing::fixture_path("models/small_cnn.json") +
                                   " --batch-size " + std::to_string(batch));
    std::smatch match;
    std::regex expected("Training step at per-replica batch " + std::to_string(batch) +
                    ": arena ([0-9.]+) MiB");
    EXPECT_TRUE(std::regex_search(result.output, match, expected)) << result.output;
    return match.empty() ? 0.0 : std::stod(match[1]);
  };
  double at_1024 = arena_mib(1024), at_2048 = arena_mib(2048);
  EXPECT_GT(at_1024, 1.0);
  EXPECT_NEAR(at_2048, 2 * at_1024, 0.01 * at_2048);

  for (const fs::path& path : {model, history, logs, backups, data, predictions}) fs::remove_all(path);
}

// The TPU's precision policies on this CPU's bfloat16 units; on a CPU without them (oneDNN told
// so with ONEDNN_MAX_CPU_ISA) mixed_bfloat16 trains in float32 after one warning; float16 is
// refused.
TEST(Commands, TrainsUnderMixedBfloat16) {
  CommandResult mixed = tenfold("train --dtype-policy mixed_bfloat16 --epochs 1 --devices 2 --verbose 2");
  ASSERT_EQ(mixed.exit_code, 0) << mixed.output;
  EXPECT_GE(number_after(mixed.output, "test accuracy: "), 0.84) << mixed.output;

  CommandResult without_units = testing::run_command("ONEDNN_MAX_CPU_ISA=AVX512_CORE " + std::string(TENFOLD_BINARY) +
                                                     " train --dtype-policy mixed_bfloat16 --epochs 1 --verbose 2");
  ASSERT_EQ(without_units.exit_code, 0) << without_units.output;
  EXPECT_NE(without_units.output.find("WARNING: this CPU has no bfloat16 units (AVX-512 BF16 or AMX): the "
                                      "mixed_bfloat16 and bfloat16 policies compute in float32 here"),
            std::string::npos)
      << without_units.output;
  EXPECT_GE(number_after(without_units.output, "test accuracy: "), 0.84) << without_units.output;

  // The bfloat16 policy (bfloat16 variables): Keras' SGD trains (Keras 3.15 reaches 0.70 in
  // this epoch); Keras' default Adam would make no update there, and is refused saying why.
  CommandResult bfloat16 = tenfold("train --dtype-policy bfloat16 --optimizer sgd --learning-rate 0.1 --epochs 1 --devices 2 --verbose 2");
  ASSERT_EQ(bfloat16.exit_code, 0) << bfloat16.output;
  EXPECT_GE(number_after(bfloat16.output, "test accuracy: "), 0.65) << bfloat16.output;
  CommandResult adam = tenfold("train --dtype-policy bfloat16 --epochs 1");
  EXPECT_NE(adam.exit_code, 0);
  EXPECT_NE(adam.output.find("Adam's beta_2 = 0.999 is 1.0 in bfloat16, so Keras' Adam makes no update at all"),
            std::string::npos)
      << adam.output;

  CommandResult float16 = tenfold("train --dtype-policy mixed_float16 --epochs 1");
  EXPECT_NE(float16.exit_code, 0);
  EXPECT_NE(float16.output.find("dtype policy 'mixed_float16' is not supported on CPUs (no float16 units); use "
                                "'mixed_bfloat16'"),
            std::string::npos)
      << float16.output;
}

TEST(Commands, MissingOrBadInputsAreClearErrors) {
  CommandResult result = tenfold("evaluate");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("tenfold evaluate needs MODEL"), std::string::npos) << result.output;
  result = tenfold("summary /nonexistent/model.h5");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("/nonexistent/model.h5"), std::string::npos) << result.output;
  result = testing::run_command("TENFOLD_DATASETS=/nonexistent " + std::string(TENFOLD_BINARY) + " train --data mnist");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("/nonexistent/mnist"), std::string::npos) << result.output;
  result = tenfold("train --memory-limit lots");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("--memory-limit expects a size such as 512M or 4G, got 'lots'"), std::string::npos);
  result = tenfold("plot /nonexistent.json");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("history file /nonexistent.json does not exist"), std::string::npos) << result.output;
  result = tenfold("train --update-freq 5");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("--update-freq needs --log-dir"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("Model: "), std::string::npos) << "refused before building: " << result.output;
  result = tenfold("train --backup-freq 5");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("--backup-freq needs --backup-dir"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("Model: "), std::string::npos) << "refused before building: " << result.output;
}

// The recipe's out-of-memory case: a batch that cannot fit fails before any work, in well
// under a second, naming what it needs, what is available and the largest batch that fits;
// that batch then passes the check and one more replica's worth does not.
TEST(Commands, BatchTooLargeForMemoryFailsAtOnce) {
  auto start = std::chrono::steady_clock::now();
  CommandResult result = tenfold("train --batch-size 1000000");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_LT(seconds, 1.0) << result.output;
  EXPECT_NE(result.output.find("not enough memory for a global batch of 1000000: training needs "), std::string::npos)
      << result.output;
  EXPECT_TRUE(result.output.find("is available (MemAvailable in /proc/meminfo)") != std::string::npos ||
              result.output.find("is available (the cgroup's limit") != std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("Epoch 1"), std::string::npos) << result.output;
  // Through a pipe too, the error is the last thing printed, after the model's summary.
  EXPECT_GT(result.output.find("tenfold: resource exhausted"), result.output.find("Total params")) << result.output;

  result = tenfold("train --devices 2 --batch-size 8192 --memory-limit 300M");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("is available (--memory-limit)"), std::string::npos) << result.output;
  const auto fits = int64_t(number_after(result.output, "the largest per-replica batch that fits is "));
  EXPECT_GT(fits, 100);
  EXPECT_LT(fits, 4096);
  CommandResult largest = tenfold("train --devices 2 --epochs 0 --verbose 0 --memory-limit 300M --per-replica-batch " +
                                  std::to_string(fits));
  EXPECT_EQ(largest.exit_code, 0) << largest.output;
  CommandResult larger = tenfold("train --devices 2 --epochs 0 --verbose 0 --memory-limit 300M --per-replica-batch " +
                                 std::to_string(fits + 1));
  EXPECT_EQ(larger.exit_code, 1) << larger.output;
}

// On a terminal, Keras 3's progress bar (redrawn with \r, bold counts, the done part green, an
// ETA while the epoch runs, values in name order); elsewhere, plain lines.
TEST(Commands, ProgressBarOnATerminalOnly) {
  CommandResult terminal = testing::run_command("script -qec '" + std::string(TENFOLD_BINARY) +
                                                " train --epochs 1 --verbose 1' /dev/null");
  ASSERT_EQ(terminal.exit_code, 0) << terminal.output;
  std::string bar;
  for (int i = 0; i < 20; ++i) bar += "\u2501";
  EXPECT_NE(terminal.output.find("\r\x1b[1m  1/118\x1b[0m \x1b[32m\x1b[0m\x1b[37m" + bar + "\x1b[0m \x1b[1m"),
            std::string::npos)
      << terminal.output;
  EXPECT_TRUE(std::regex_search(terminal.output, std::regex("\r\x1b\\[1m118/118\x1b\\[0m \x1b\\[32m(\u2501){20}\x1b\\[0m"
                                                            "\x1b\\[37m\x1b\\[0m \x1b\\[1m[0-9]+s\x1b\\[0m [0-9]+ms/step - "
                                                            "accuracy: 0\\.[0-9]{4} - loss: 0\\.[0-9]{4} - val_accuracy")))
      << terminal.output;
  CommandResult log = tenfold("train --epochs 1 --verbose 2");
  EXPECT_TRUE(std::regex_search(log.output, std::regex("\n118/118 - [0-9]+s - [0-9]+ms/step - accuracy: 0\\.[0-9]{4} - "
                                                       "loss: 0\\.[0-9]{4} - val_accuracy: 0\\.[0-9]{4} - val_loss: 0\\.[0-9]{4}\n")))
      << log.output;
}

// tenfold plot draws Keras' own history (tests/fixtures/keras/curve.json): a PNG of the size
// asked, with both the training and the validation curves in it.
TEST(Commands, PlotDrawsBothCurves) {
  fs::path png = scratch("curves.png");
  CommandResult result = tenfold("plot " + testing::fixture_path("keras/curve.json") + " --output " + png.string() +
                                 " --width 900 --height 360");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  Tensor image = datasets::read_png(png.string(), 3);
  ASSERT_EQ(image.shape(), Shape({360, 900, 3}));
  // Pixels of each curve's colour (training blue 31,120,181; validation orange 255,128,13),
  // in each half (loss on the left, accuracy on the right).
  int counts[2][2] = {};
  const uint8_t* pixels = image.data<uint8_t>();
  for (int64_t y = 0; y < 360; ++y) {
    for (int64_t x = 0; x < 900; ++x) {
      const uint8_t* p = pixels + (y * 900 + x) * 3;
      int half = x < 450 ? 0 : 1;
      if (std::abs(p[0] - 31) < 12 && std::abs(p[1] - 120) < 12 && std::abs(p[2] - 181) < 12) ++counts[half][0];
      if (std::abs(p[0] - 255) < 12 && std::abs(p[1] - 128) < 12 && std::abs(p[2] - 13) < 12) ++counts[half][1];
    }
  }
  for (int half = 0; half < 2; ++half) {
    EXPECT_GT(counts[half][0], 500) << "training curve, panel " << half;
    EXPECT_GT(counts[half][1], 500) << "validation curve, panel " << half;
  }
  fs::path bad = scratch("bad.json");
  std::ofstream(bad) << R"({"loss": [0.5, "high"]})";
  result = tenfold("plot " + bad.string());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("\"loss\" holds a value that is not a number"), std::string::npos) << result.output;
  fs::remove(bad);
  fs::remove(png);
}

TEST(Commands, DevicesListsWorkersDevicesAndReplicas) {
  CommandResult result = tenfold("devices --devices 3");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("Workers: 1"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("/device:CPU:2"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("Number of replicas: 3"), std::string::npos) << result.output;
  result = tenfold("devices --workers grpc://127.0.0.1:1 --connect-timeout 2");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("cannot reach worker 127.0.0.1:1"), std::string::npos) << result.output;
}

// examples/recipe.cpp, the recipe as a program, for one epoch.
TEST(Example, RecipeRunsEndToEnd) {
  fs::path model = scratch("recipe_model.h5");
  CommandResult result = testing::run_command(std::string(TENFOLD_EXAMPLE_RECIPE) + " 1 " + model.string());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("Number of devices: "), std::string::npos) << result.output;
  EXPECT_GE(number_after(result.output, "val_accuracy: "), 0.84) << result.output;
  EXPECT_NEAR(number_after(result.output, "Restored model: test loss: "), number_after(result.output, "val_loss: "),
              1e-4) << result.output;
  EXPECT_TRUE(fs::exists(model));
  fs::remove(model);
  EXPECT_EQ(testing::run_command(std::string(TENFOLD_EXAMPLE_RECIPE) + " many").exit_code, 1);
}

}  // namespace
}  // namespace tenfold
