// keras.callbacks in fit: a run interrupted and resumed from BackupAndRestore ends where an
// uninterrupted one does; a damaged newest backup falls back to the previous one; saves are
// crash-safe at every step; the other callbacks keep Keras' behaviour.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "callbacks/backup_and_restore.h"
#include "callbacks/keras_callbacks.h"
#include "callbacks/tensorboard.h"
#include "core/error.h"
#include "core/random.h"
#include "io/model_file.h"
#include "layers/dense.h"
#include "layers/input.h"
#include "layers/merge.h"
#include "models/functional.h"
#include "optimizers/adam.h"
#include "models/sequential.h"
#include "support/check.h"
#include "support/process.h"

namespace tenfold::callbacks {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  fs::path path = fs::temp_directory_path() / ("tenfold_callbacks_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(path);
  return path;
}

/// A small MLP; `functional`: with two Dense branches added (a Functional model).
std::unique_ptr<models::Model> small_model(float learning_rate = 0.01f, bool functional = false) {
  set_random_seed(3);
  auto dense = [](int64_t units, const std::string& activation) {
    return std::make_shared<layers::Dense>(layers::DenseOptions{.units = units, .activation = activation});
  };
  std::unique_ptr<models::Model> model;
  if (functional) {
    auto inputs = layers::Input({4});
    KerasTensor sum = (*std::make_shared<layers::Add>())({(*dense(8, "relu"))(inputs), (*dense(8, "tanh"))(inputs)});
    model = std::make_unique<models::Functional>(inputs, (*dense(3, "softmax"))(sum));
  } else {
    model = std::make_unique<models::Sequential>(
        std::vector<std::shared_ptr<Layer>>{layers::Input({4}), dense(8, "relu"), dense(3, "softmax")});
  }
  model->compile(std::make_shared<optimizers::Adam>(learning_rate),
                 losses::get("sparse_categorical_crossentropy"), {"accuracy"});
  return model;
}

/// 60 samples, shuffled with a seed (the same batches for the same epoch), batches of 8.
data::Dataset batches() {
  Tensor x(Shape{60, 4}), y(Shape{60}, DType::int32);
  auto values = testing::random_values(240, 9);
  std::copy(values.begin(), values.end(), x.data<float>());
  for (int i = 0; i < 60; ++i) y.data<int32_t>()[i] = int32_t(values[size_t(i) * 4] > 0) + int32_t(values[size_t(i) * 4 + 1] > 0.5);
  return data::Dataset::from_tensor_slices({x, y}).shuffle(60, 7).batch(8);
}

models::FitOptions options(int epochs, std::vector<std::shared_ptr<Callback>> callbacks) {
  models::FitOptions fit;
  fit.epochs = epochs;
  fit.verbose = 0;
  fit.callbacks = std::move(callbacks);
  return fit;
}

/// Throws at a given global batch: a crash in the middle of an epoch.
struct CrashAt : Callback {
  int64_t at;
  explicit CrashAt(int64_t batch) : at(batch) {}
  void on_train_batch_end(int64_t, const Logs&) override {
    if (model().optimizer()->iterations() == at) throw Error(ErrorCode::internal, "simulated crash");
  }
};

void expect_same_weights(models::Model& a, models::Model& b) {
  EXPECT_EQ(a.optimizer()->iterations(), b.optimizer()->iterations()) << "batches applied";
  for (size_t i = 0; i < a.weights().size(); ++i) {
    EXPECT_TRUE(testing::all_close(a.weights()[i]->read(), b.weights()[i]->read(), 1e-6, 1e-7)) << "weight " << i;
  }
}

class BackupAndRestoreOf : public ::testing::TestWithParam<bool> {};  // functional or not

TEST_P(BackupAndRestoreOf, AResumedRunEndsWhereAnUninterruptedOneDoes) {
  const bool functional = GetParam();
  auto uninterrupted = small_model(0.01f, functional);
  uninterrupted->fit(batches(), options(4, {}));

  fs::path dir = scratch("backups");
  auto interrupted = small_model(0.01f, functional);
  EXPECT_THROW(interrupted->fit(batches(), options(4, {std::make_shared<BackupAndRestore>(dir.string(), 3),
                                                       std::make_shared<CrashAt>(19)})),
               Error);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 2) << "two backups kept";
  auto resumed = small_model(0.01f, functional);
  ::testing::internal::CaptureStdout();
  resumed->fit(batches(), options(4, {std::make_shared<BackupAndRestore>(dir.string(), 3)}));
  std::string output = ::testing::internal::GetCapturedStdout();
  // 8 batches per epoch: the backup after batch 18 is epoch 3, batch 2.
  EXPECT_NE(output.find("resuming at epoch 3, batch 2 (18 batches applied)"), std::string::npos) << output;
  expect_same_weights(*resumed, *uninterrupted);
  EXPECT_FALSE(fs::exists(dir) && !fs::is_empty(dir)) << "backups are deleted at the end";
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(SequentialAndFunctional, BackupAndRestoreOf, ::testing::Bool());

TEST(BackupAndRestore, ADamagedNewestBackupFallsBackToThePreviousOne) {
  auto uninterrupted = small_model();
  uninterrupted->fit(batches(), options(3, {}));
  fs::path dir = scratch("damaged");
  auto interrupted = small_model();
  EXPECT_THROW(interrupted->fit(batches(), options(3, {std::make_shared<BackupAndRestore>(dir.string()),
                                                       std::make_shared<CrashAt>(20)})),
               Error);
  fs::path newest = dir / "backup-000000000016.h5";  // epoch backups after 8 and 16 batches
  ASSERT_TRUE(fs::exists(newest));
  fs::resize_file(newest, fs::file_size(newest) / 2);
  auto resumed = small_model();
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  resumed->fit(batches(), options(3, {std::make_shared<BackupAndRestore>(dir.string())}));
  std::string output = ::testing::internal::GetCapturedStdout();
  std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("backup-000000000016.h5 cannot be restored"), std::string::npos) << warnings;
  EXPECT_NE(output.find("resuming at epoch 2, batch 0"), std::string::npos) << output;
  expect_same_weights(*resumed, *uninterrupted);
  fs::remove_all(dir);
}

TEST(CrashSafety, EveryStepOfASaveLeavesTheOldOrTheNewFileLoadable) {
  fs::path path = scratch("checkpoint.h5");
  auto old_model = small_model();
  io::save_model(*old_model, path.string());
  auto new_model = small_model();
  new_model->fit(batches(), options(1, {}));
  for (const char* point : {"written", "synced", "renamed"}) {
    SCOPED_TRACE(point);
    io::save_model(*old_model, path.string());
    pid_t child = fork();
    if (child == 0) {
      setenv("TENFOLD_TEST_CRASH_AT", point, 1);
      io::save_model(*new_model, path.string());
      _exit(0);  // not reached: the save ends the process at `point`
    }
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_EQ(WEXITSTATUS(status), 86);
    auto loaded = io::load_model(path.string());
    int64_t iterations = loaded->optimizer()->iterations();
    EXPECT_TRUE(iterations == 0 || iterations == 8) << iterations;
    EXPECT_EQ(iterations, std::string(point) == "renamed" ? 8 : 0);
    for (const auto& entry : fs::directory_iterator(path.parent_path())) {
      if (entry.path().string().rfind(path.string() + ".tmp", 0) == 0) fs::remove(entry.path());
    }
  }
  fs::remove(path);
}

TEST(EarlyStopping, StopsAfterPatienceEpochsWithoutImprovement) {
  auto model = small_model(0.0f);  // nothing changes: no epoch improves on the first
  auto stopping = std::make_shared<EarlyStopping>(EarlyStopping::Options{.monitor = "loss", .patience = 2});
  models::History history = model->fit(batches(), options(10, {stopping}));
  EXPECT_EQ(history.epoch.size(), 3u);  // as Keras: epochs 0, 1, 2; stopped at 2
  EXPECT_EQ(stopping->stopped_epoch(), 2);
  auto missing = std::make_shared<EarlyStopping>(EarlyStopping::Options{.monitor = "val_loss"});
  try {
    model->fit(batches(), options(2, {missing}));
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("monitors 'val_loss', which the logs do not hold"), std::string::npos);
  }
}

/// Records the running loss after every batch.
struct LossRecorder : Callback {
  std::vector<double> losses;
  void on_train_batch_end(int64_t, const Logs& logs) override { losses.push_back(*find_log(logs, "loss")); }
};

TEST(TerminateOnNaN, StopsAtTheFirstNonFiniteLoss) {
  auto model = small_model(1e36f);  // diverges within a few batches
  auto recorder = std::make_shared<LossRecorder>();
  ::testing::internal::CaptureStdout();
  model->fit(batches(), options(3, {recorder, std::make_shared<TerminateOnNaN>()}));
  std::string output = ::testing::internal::GetCapturedStdout();
  auto first_bad = std::find_if(recorder->losses.begin(), recorder->losses.end(),
                                [](double loss) { return !std::isfinite(loss); });
  ASSERT_NE(first_bad, recorder->losses.end()) << "the loss never diverged";
  EXPECT_EQ(first_bad + 1, recorder->losses.end()) << "training went on after a non-finite loss";
  EXPECT_LT(recorder->losses.size(), 24u);
  EXPECT_NE(output.find("Invalid loss, terminating training"), std::string::npos) << output;
}

TEST(CSVLogger, WritesKerasHeaderAndOneRowPerEpoch) {
  fs::path path = scratch("log.csv");
  auto model = small_model();
  model->fit(batches(), options(2, {std::make_shared<CSVLogger>(path.string())}));
  std::ifstream file(path);
  std::string header, first, second, extra;
  std::getline(file, header);
  std::getline(file, first);
  std::getline(file, second);
  EXPECT_EQ(header, "epoch,accuracy,loss");
  EXPECT_EQ(first.rfind("0,", 0), 0u);
  EXPECT_EQ(second.rfind("1,", 0), 0u);
  EXPECT_FALSE(std::getline(file, extra));
  fs::remove(path);
}

TEST(ModelCheckpoint, SavesBestOnlyWithKerasPlaceholders) {
  fs::path dir = scratch("checkpoints");
  fs::create_directories(dir);
  auto model = small_model(0.0f);  // constant loss: only the first epoch is an improvement
  ModelCheckpoint::Options best{.monitor = "loss", .save_best_only = true};
  model->fit(batches(), options(3, {std::make_shared<ModelCheckpoint>((dir / "m-{epoch:02d}-{loss:.2f}.h5").string(), best)}));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0].rfind("m-01-", 0), 0u) << names[0];
  auto every = small_model();
  every->fit(batches(), options(2, {std::make_shared<ModelCheckpoint>(
                                 (dir / "w-{epoch}.weights.h5").string(), ModelCheckpoint::Options{.save_weights_only = true})}));
  EXPECT_TRUE(fs::exists(dir / "w-1.weights.h5"));
  EXPECT_TRUE(fs::exists(dir / "w-2.weights.h5"));
  EXPECT_THROW(ModelCheckpoint((dir / "x.h5").string(), ModelCheckpoint::Options{.save_weights_only = true}), Error);
  // A placeholder format that printf would misread is refused, not passed on.
  auto bad = small_model();
  EXPECT_THROW(bad->fit(batches(), options(1, {std::make_shared<ModelCheckpoint>((dir / "m-{epoch:s}.h5").string())})),
               Error);
  fs::remove_all(dir);
}

TEST(LearningRate, SchedulerAndReduceOnPlateau) {
  auto model = small_model();
  model->fit(batches(), options(3, {std::make_shared<LearningRateScheduler>(
                                   [](int epoch, double rate) { return epoch == 0 ? rate : rate / 2; })}));
  EXPECT_FLOAT_EQ(model->optimizer()->learning_rate(), 0.01f / 4);
  auto plateau = small_model(0.0f);
  // A constant loss: after `patience` epochs without improvement the rate is multiplied.
  plateau->optimizer()->set_learning_rate(1e-30f);
  plateau->fit(batches(), options(4, {std::make_shared<ReduceLROnPlateau>(
                                     ReduceLROnPlateau::Options{.monitor = "loss", .factor = 0.5, .patience = 2})}));
  EXPECT_FLOAT_EQ(plateau->optimizer()->learning_rate(), 1e-30f * 0.5f);
}

TEST(TensorBoard, Crc32cKnownAnswer) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);  // the check value of RFC 3720, appendix B.4
  EXPECT_EQ(crc32c("", 0), 0u);
}

/// The logs of every training batch, by the optimizer's step count.
struct BatchLogs : Callback {
  std::map<int64_t, Logs> at_step;
  void on_train_batch_end(int64_t, const Logs& logs) override { at_step[model().optimizer()->iterations()] = logs; }
};

// TensorBoard's own reader (tests/callbacks/read_tensorboard.py, tensorboard from PyPI, which
// checks each record's CRC) finds the scalars Keras' layout puts where they belong, with fit's
// values: per epoch in train/ and validation/, per 3 steps in train/.
TEST(TensorBoard, TensorBoardReadsTheScalarsFitLogged) {
  fs::path dir = scratch("tensorboard");
  auto model = small_model();
  auto batch_logs = std::make_shared<BatchLogs>();
  auto fit = options(3, {std::make_shared<TensorBoard>(dir.string(), 3), batch_logs});
  fit.validation_dataset = batches();
  models::History history = model->fit(batches(), fit);
  for (const char* run : {"train", "validation"}) {
    ASSERT_TRUE(fs::is_directory(dir / run));
    auto file = fs::directory_iterator(dir / run)->path().filename().string();
    EXPECT_EQ(file.rfind("events.out.tfevents.", 0), 0u) << file;
  }
  const char* python = std::getenv("TENFOLD_KERAS_PYTHON");
  if (python && !fs::exists(python)) GTEST_SKIP() << python << " does not exist: tensorboard was not installed";
  testing::CommandResult result = testing::run_command(std::string(python ? python : "python3") + " " +
                                                       TENFOLD_TESTS_DIR + "/callbacks/read_tensorboard.py " + dir.string());
  if (result.exit_code == 77) GTEST_SKIP() << result.output;
  ASSERT_EQ(result.exit_code, 0) << result.output;
  ASSERT_NE(result.output.find("SCALARS "), std::string::npos) << result.output;
  auto scalars = nlohmann::json::parse(result.output.substr(result.output.find("SCALARS ") + 8));
  auto expect_series = [&](const nlohmann::json& series, const std::vector<std::pair<int64_t, double>>& expected) {
    ASSERT_EQ(series.size(), expected.size()) << series;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(series[i][0].get<int64_t>(), expected[i].first);
      EXPECT_NEAR(series[i][1].get<double>(), expected[i].second, 1e-6 * std::abs(expected[i].second) + 1e-7);
    }
  };
  for (std::string name : {"loss", "accuracy"}) {
    std::vector<std::pair<int64_t, double>> train, validation, batch;
    for (int epoch = 0; epoch < 3; ++epoch) {
      train.emplace_back(epoch, history.history.at(name)[size_t(epoch)]);
      validation.emplace_back(epoch, history.history.at("val_" + name)[size_t(epoch)]);
    }
    for (int64_t step = 3; step <= 24; step += 3) batch.emplace_back(step, *find_log(batch_logs->at_step.at(step), name));
    expect_series(scalars["train"]["epoch_" + name], train);
    expect_series(scalars["validation"]["epoch_" + name], validation);
    expect_series(scalars["train"]["batch_" + name], batch);
  }
  expect_series(scalars["train"]["epoch_learning_rate"], {{0, 0.01}, {1, 0.01}, {2, 0.01}});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tenfold::callbacks
