// The recipe end to end through the command line: `tenfold train` on Fashion-MNIST reaches
// Keras' accuracy. Keras' curve: tests/fixtures/keras/curve.json (tools/make_keras_fixtures.py).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/check.h"

namespace tenfold {
namespace {

using nlohmann::json;

struct CommandResult {
  int exit_code;
  std::string output;
};

CommandResult run_tenfold(const std::string& arguments) {
  std::string command = std::string(TENFOLD_BINARY) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  while (size_t got = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, got);
  int status = pclose(pipe);
  return {WEXITSTATUS(status), output};
}

TEST(TrainRecipe, OneEpochReaches84Percent) {
  CommandResult result = run_tenfold("train --epochs 1 --verbose 2");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  auto at = result.output.find("test accuracy: ");
  ASSERT_NE(at, std::string::npos) << result.output;
  double accuracy = std::stod(result.output.substr(at + 15));
  EXPECT_GE(accuracy, 0.84) << result.output;
}

// One run's curve moves by about 0.01 with the seed (for Keras and Tenfold alike), so the
// curves compared are means over seeds: three Tenfold runs, and Keras' runs in the fixture.
TEST(TrainRecipe, TenEpochsFollowKerasCurve) {
  const std::vector<int> seeds = {1, 2, 3};
  std::vector<double> mean(10, 0.0);
  for (int seed : seeds) {
    std::string history_path =
        (std::filesystem::temp_directory_path() / ("tenfold_history_" + std::to_string(seed) + ".json")).string();
    CommandResult result = run_tenfold("train --epochs 10 --verbose 2 --seed " + std::to_string(seed) +
                                       " --history " + history_path);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    std::cout << result.output;
    json ours = json::parse(std::ifstream(history_path));
    std::filesystem::remove(history_path);
    const json& accuracy = ours.at("history").at("val_accuracy");
    ASSERT_EQ(accuracy.size(), 10u);
    for (const char* key : {"loss", "accuracy", "val_loss"}) EXPECT_EQ(ours.at("history").at(key).size(), 10u);
    EXPECT_GE(accuracy[9].get<double>(), 0.90) << "seed " << seed;
    for (size_t epoch = 0; epoch < 10; ++epoch) mean[epoch] += accuracy[epoch].get<double>() / double(seeds.size());
  }
  json keras = json::parse(std::ifstream(testing::fixture_path("keras/curve.json")));
  const json& keras_mean = keras.at("history").at("val_accuracy");
  for (size_t epoch = 0; epoch < 10; ++epoch) {
    EXPECT_NEAR(mean[epoch], keras_mean[epoch].get<double>(), 0.01) << "epoch " << epoch + 1;
  }
  EXPECT_GE(mean[9], 0.90);
}

TEST(TrainRecipe, BadOptionsAreClearErrors) {
  CommandResult result = run_tenfold("train --epochs many");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("--epochs expects an integer >= 0, got 'many'"), std::string::npos) << result.output;
  result = run_tenfold("train --batch-size 0");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("--batch-size expects an integer >= 1, got '0'"), std::string::npos) << result.output;
  result = run_tenfold("train --data /nonexistent");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("put the four IDX files"), std::string::npos) << result.output;
  result = run_tenfold("fly");
  EXPECT_EQ(result.exit_code, 2);
  result = run_tenfold("train --help");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.output.find("--batch-size N"), std::string::npos);
}

}  // namespace
}  // namespace tenfold
