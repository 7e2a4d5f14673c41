// Real data sets a user brings, not written by the project: scikit-learn's breast cancer and
// diabetes tables, written to CSV by pandas with Keras models made for them
// (tests/cli/sklearn_data.py, in the test venv), trained and evaluated through the command line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/process.h"
#include "support/tenfold_command.h"

namespace tenfold {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::number_after;
using testing::tenfold;

class RealData : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* python = std::getenv("TENFOLD_KERAS_PYTHON");
    if (!python || !fs::exists(python)) return;
    directory_ = fs::temp_directory_path() / ("tenfold_real_data_" + std::to_string(getpid()));
    CommandResult made = testing::run_command(std::string(python) + " " + TENFOLD_TESTS_DIR + "/cli/sklearn_data.py " +
                                              directory_.string());
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }
  static void TearDownTestSuite() {
    if (!directory_.empty()) fs::remove_all(directory_);
  }
  void SetUp() override {
    if (directory_.empty()) GTEST_SKIP() << "TENFOLD_KERAS_PYTHON is not set up: scikit-learn was not installed";
  }
  static std::string path(const std::string& name) { return (directory_ / name).string(); }

  static fs::path directory_;
};

fs::path RealData::directory_;

TEST_F(RealData, BreastCancerClassifiedAbove95Percent) {
  CommandResult train = tenfold("train --model " + path("breast_cancer.keras") + " --data " +
                                path("breast_cancer_train.csv") + " --label target --epochs 40 --batch-size 32 "
                                "--verbose 0 --save " + path("breast_cancer_trained.keras"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  CommandResult evaluate = tenfold("evaluate " + path("breast_cancer_trained.keras") + " --data " +
                                   path("breast_cancer_test.csv") + " --label target");
  ASSERT_EQ(evaluate.exit_code, 0) << evaluate.output;
  EXPECT_GE(number_after(evaluate.output, "test accuracy: "), 0.95) << evaluate.output;
}

TEST_F(RealData, DiabetesRegressionReachesKerasError) {
  // Keras trained the same model the same way (200 epochs of batches of 32, Adam 1e-2); a
  // different initialisation and shuffle, so within 5% of its mean absolute error.
  CommandResult train = tenfold("train --model " + path("diabetes.keras") + " --data " + path("diabetes_train.csv") +
                                " --label target --epochs 200 --batch-size 32 --verbose 0 --save " +
                                path("diabetes_trained.keras"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  CommandResult evaluate = tenfold("evaluate " + path("diabetes_trained.keras") + " --data " +
                                   path("diabetes_test.csv") + " --label target");
  ASSERT_EQ(evaluate.exit_code, 0) << evaluate.output;
  const double keras_mae = nlohmann::json::parse(std::ifstream(path("keras.json")))["diabetes_test_mae"];
  EXPECT_LE(number_after(evaluate.output, "test mae: "), 1.05 * keras_mae) << evaluate.output;
}

}  // namespace
}  // namespace tenfold
