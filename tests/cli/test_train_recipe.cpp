// The recipe end to end through the command line: `tenfold train` on Fashion-MNIST reaches
// Keras' accuracy. Keras' curve: tests/fixtures/keras/curve.json (tools/make_keras_fixtures.py).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/check.h"
#include "support/process.h"
#include "support/tenfold_command.h"

namespace tenfold {
namespace {

using nlohmann::json;

using testing::CommandResult;
using testing::tenfold;

TEST(TrainRecipe, OneEpochReaches84PercentAndSavesAModelThatLoadsBack) {
  std::string model_path = (std::filesystem::temp_directory_path() / "tenfold_cli_model.h5").string();
  CommandResult result = tenfold("train --epochs 1 --verbose 2 --save " + model_path);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  auto at = result.output.find("test accuracy: ");
  ASSERT_NE(at, std::string::npos) << result.output;
  double accuracy = std::stod(result.output.substr(at + 15));
  EXPECT_GE(accuracy, 0.84) << result.output;
  // The file holds the same model: the same test metrics once loaded back.
  auto loaded = result.output.find("loaded back: ");
  ASSERT_NE(loaded, std::string::npos) << result.output;
  double trained_loss = 0, trained_accuracy = 0, loaded_loss = 0, loaded_accuracy = 0;
  std::sscanf(result.output.c_str() + result.output.find("Test loss: "),
              "Test loss: %lf - test accuracy: %lf", &trained_loss, &trained_accuracy);
  std::sscanf(result.output.c_str() + loaded, "loaded back: test loss: %lf - test accuracy: %lf",
              &loaded_loss, &loaded_accuracy);
  EXPECT_GT(loaded_loss, 0);
  EXPECT_EQ(loaded_loss, trained_loss);
  EXPECT_EQ(loaded_accuracy, trained_accuracy);
  std::filesystem::remove(model_path);
}

// One run's curve moves by about 0.01 with the seed (for Keras and Tenfold alike), so the
// curves compared are means over seeds: three Tenfold runs, and Keras' runs in the fixture.
TEST(TrainRecipe, TenEpochsFollowKerasCurve) {
  const std::vector<int> seeds = {1, 2, 3};
  std::vector<double> mean(10, 0.0);
  for (int seed : seeds) {
    std::string history_path =
        (std::filesystem::temp_directory_path() / ("tenfold_history_" + std::to_string(seed) + ".json")).string();
    CommandResult result = tenfold("train --epochs 10 --verbose 2 --seed " + std::to_string(seed) +
                                       " --history " + history_path);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    std::cout << result.output;
    json ours = json::parse(std::ifstream(history_path));
    std::filesystem::remove(history_path);
    const json& accuracy = ours.at("history").at("val_accuracy");
    ASSERT_EQ(accuracy.size(), 10u);
    for (const char* key : {"loss", "accuracy", "val_loss"}) EXPECT_EQ(ours.at("history").at(key).size(), 10u);
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
  CommandResult result = tenfold("train --epochs many");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("--epochs expects an integer >= 0, got 'many'"), std::string::npos) << result.output;
  result = tenfold("train --batch-size 0");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("--batch-size expects an integer >= 1, got '0'"), std::string::npos) << result.output;
  result = tenfold("train --data /nonexistent");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("/nonexistent does not exist; create it and put the data set's four IDX files there"),
            std::string::npos) << result.output;
  result = tenfold("train --batch-size 256 --per-replica-batch 64");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("give --batch-size (global) or --per-replica-batch, not both"),
            std::string::npos) << result.output;
  result = tenfold("train --workers grpc://127.0.0.1:1 --connect-timeout 2");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("cannot reach worker 127.0.0.1:1"), std::string::npos) << result.output;
  result = tenfold("train --devices 0");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("--devices expects an integer >= 1, got '0'"), std::string::npos) << result.output;
  result = tenfold("fly");
  EXPECT_EQ(result.exit_code, 2);
  result = tenfold("train --help");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.output.find("--batch-size N"), std::string::npos);
}

TEST(TrainRecipe, TrainsAKerasModelJson) {
  CommandResult result = tenfold("train --epochs 1 --verbose 2 --model " +
                                     testing::fixture_path("models/small_cnn.json"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("(None, 26, 26, 8)"), std::string::npos) << result.output;
  double accuracy = std::stod(result.output.substr(result.output.find("test accuracy: ") + 15));
  EXPECT_GE(accuracy, 0.7) << result.output;
  result = tenfold("train --model /nonexistent/model.json");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("model JSON /nonexistent/model.json does not exist"), std::string::npos) << result.output;
}

// The recipe across processes: every rank trains, rank 0 alone prints, and the result is the
// one a single process gets with the same global batch over as many local replicas (each
// replica's batch of the same shape: one replica of 512 runs other kernel blockings, and float
// summation order alone moves an epoch's test loss by 5e-4 on an AVX2 CPU; one replica's step
// equals two's within 1e-5 in test_distribute).
TEST(TrainRecipe, UnderMpirunTwoProcessesTrainAsOne) {
  CommandResult single = tenfold("train --epochs 1 --verbose 0 --devices 2");
  ASSERT_EQ(single.exit_code, 0) << single.output;
  CommandResult job = testing::run_command("mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x "
                          "OMP_NUM_THREADS=1 " + std::string(TENFOLD_BINARY) +
                          " train --epochs 1 --verbose 1 --devices 1");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  EXPECT_NE(job.output.find("Number of replicas: 2 (2 workers x 1 device)"), std::string::npos) << job.output;
  auto at = job.output.find("Test loss");
  ASSERT_NE(at, std::string::npos) << job.output;
  EXPECT_EQ(job.output.find("Test loss", at + 1), std::string::npos) << "printed by more than rank 0";
  // Same global batches, same weights up to float summation order: the same test metrics (a
  // sample or two may flip, 0.0002 of the accuracy each).
  auto metrics = [](const std::string& output) {
    double loss = 0, accuracy = 0;
    std::sscanf(output.substr(output.find("Test loss")).c_str(),
                "Test loss: %lf - test accuracy: %lf", &loss, &accuracy);
    return std::pair{loss, accuracy};
  };
  auto [job_loss, job_accuracy] = metrics(job.output);
  auto [single_loss, single_accuracy] = metrics(single.output);
  EXPECT_NEAR(job_loss, single_loss, 2e-4);
  EXPECT_NEAR(job_accuracy, single_accuracy, 5e-4);
}

}  // namespace
}  // namespace tenfold
