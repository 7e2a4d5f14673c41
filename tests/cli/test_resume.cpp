// Resuming the recipe after SIGKILL: `tenfold train --backup-dir` killed at a random moment and
// run again ends with the weights of an uninterrupted run and the same number of batches
// applied; alone, and under mpirun with one of the two workers killed.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "io/model_file.h"
#include "support/check.h"
#include "support/process.h"

namespace tenfold {
namespace {

namespace fs = std::filesystem;
using testing::Process;

fs::path scratch(const std::string& name) {
  fs::path path = fs::temp_directory_path() / ("tenfold_resume_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(path);
  return path;
}

std::vector<std::string> train(const fs::path& backups, const fs::path& model, int processes) {
  std::vector<std::string> command;
  if (processes > 1) {
    command = {"mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np",
               std::to_string(processes), "-x", "OMP_NUM_THREADS=1"};
  }
  for (std::string arg : {std::string(TENFOLD_BINARY), std::string("train"), std::string("--epochs"), std::string("2"),
                          std::string("--devices"), std::string("1"), std::string("--verbose"), std::string("0"),
                          std::string("--backup-dir"), backups.string(), std::string("--backup-freq"),
                          std::string("10"), std::string("--save"), model.string()}) {
    command.push_back(arg);
  }
  return command;
}

/// The pids of the tenfold workers (not mpirun) whose command line names `marker`.
std::vector<pid_t> workers_naming(const std::string& marker) {
  std::vector<pid_t> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream file(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (cmdline.rfind(TENFOLD_BINARY, 0) == 0 && cmdline.find(marker) != std::string::npos) {
      pids.push_back(pid_t(std::stoi(name)));
    }
  }
  return pids;
}

void expect_same_training(const fs::path& expected_path, const fs::path& actual_path) {
  auto expected = io::load_model(expected_path.string());
  auto actual = io::load_model(actual_path.string());
  EXPECT_EQ(actual->optimizer()->iterations(), expected->optimizer()->iterations()) << "batches applied";
  for (size_t i = 0; i < expected->weights().size(); ++i) {
    EXPECT_TRUE(testing::all_close(actual->weights()[i]->read(), expected->weights()[i]->read(), 1e-6, 1e-7))
        << "weight " << i;
  }
}

/// Whether `dir` holds a finished backup (backup-<batches>.h5; written under a temporary name
/// and renamed, so one that exists is whole).
bool has_backup(const fs::path& dir) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("backup-", 0) == 0 && entry.path().extension() == ".h5") return true;
  }
  return false;
}

void kill_and_resume(int processes) {
  using Clock = std::chrono::steady_clock;
  fs::path reference = scratch("reference.h5"), resumed = scratch("resumed.h5");
  fs::path reference_backups = scratch("reference_backups"), backups = scratch("backups");
  Clock::time_point start = Clock::now();
  Process uninterrupted(train(reference_backups, reference, processes), scratch("reference.log"));
  ASSERT_EQ(uninterrupted.wait(300), 0) << uninterrupted.output();
  double run_seconds = std::chrono::duration<double>(Clock::now() - start).count();

  // Killed at a random moment after the first backup (a kill before it leaves nothing to resume
  // from, and the machine's speed decides when that is); the seed is printed.
  unsigned seed = unsigned(std::random_device{}());
  double delay = std::uniform_real_distribution<double>(0.0, run_seconds / 2)(*std::make_unique<std::mt19937>(seed));
  {
    Process first(train(backups, resumed, processes), scratch("first.log"));
    auto deadline = Clock::now() + std::chrono::duration<double>(2 * run_seconds + 60);
    while (!has_backup(backups) && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(has_backup(backups)) << "no backup written in " << 2 * run_seconds + 60 << " s\n" << first.output();
    std::cout << "killing " << delay << " s after the first backup (seed " << seed << ")\n";
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    if (processes == 1) {
      kill(first.pid(), SIGKILL);
    } else {
      std::vector<pid_t> workers = workers_naming(backups.string());
      ASSERT_FALSE(workers.empty()) << first.output();
      kill(workers.back(), SIGKILL);  // one worker; mpirun ends the others
    }
    int code = first.wait(60);
    if (code == 0) GTEST_SKIP() << "the run finished before the kill; nothing to resume";
    EXPECT_NE(code, -1) << "the job did not end after a worker was killed";
  }
  ASSERT_FALSE(fs::exists(resumed)) << "the killed run must not have saved its final model";
  Process second(train(backups, resumed, processes), scratch("second.log"));
  ASSERT_EQ(second.wait(300), 0) << second.output();
  EXPECT_NE(second.output().find("resuming at epoch"), std::string::npos) << second.output();
  expect_same_training(reference, resumed);
  for (const fs::path& path : {reference, resumed, reference_backups, backups}) fs::remove_all(path);
}

TEST(Resume, KilledRunResumesToTheUninterruptedWeights) { kill_and_resume(1); }

TEST(Resume, KilledWorkerOfTwoResumesToTheUninterruptedWeights) { kill_and_resume(2); }

}  // namespace
}  // namespace tenfold
