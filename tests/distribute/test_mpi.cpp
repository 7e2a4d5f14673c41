// Training across processes under mpirun (tests/distribute/mpi_worker.cpp is the worker):
// an all-reduce larger than one bucket is right on every rank; 2 processes x 2 replicas, and
// 2 hosts (network namespaces, two_hosts.sh), reach the weights of 1 replica; a killed or stopped worker ends the whole job in bounded time, named, with
// nothing left running.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "distribute/communicator.h"
#include "support/check.h"
#include "support/process.h"

namespace tenfold {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::Process;
using testing::alive;

const std::string worker = TENFOLD_MPI_WORKER;

fs::path scratch(const std::string& name) {
  fs::path path = fs::temp_directory_path() / ("tenfold_mpi_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(path);
  return path;
}

std::vector<std::string> mpirun(int processes, const std::vector<std::string>& worker_args,
                                const std::string& collective_timeout = "120") {
  std::vector<std::string> command = {"mpirun", "--allow-run-as-root", "--oversubscribe",
                                      "--bind-to", "none", "-np", std::to_string(processes),
                                      "-x", "OMP_NUM_THREADS=1", "-x",
                                      "TENFOLD_COLLECTIVE_TIMEOUT=" + collective_timeout, worker};
  command.insert(command.end(), worker_args.begin(), worker_args.end());
  return command;
}

std::vector<char> read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}


/// mpirun's daemons end the workers as the job ends; give them a moment to finish.
bool gone_soon(pid_t pid) {
  for (int tries = 0; tries < 100 && alive(pid); ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !alive(pid);
}

/// Waits until every rank wrote its pid to `directory`; returns them by rank.
std::vector<pid_t> worker_pids(const fs::path& directory, int ranks, Process& job) {
  auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    std::vector<pid_t> pids;
    for (int rank = 0; rank < ranks; ++rank) {
      std::ifstream file(directory / ("rank_" + std::to_string(rank)));
      pid_t pid = 0;
      if (file >> pid) pids.push_back(pid);
    }
    if (int(pids.size()) == ranks) return pids;
    if (job.wait(0.2) >= 0) break;
  }
  ADD_FAILURE() << "the workers did not all start:\n" << job.output();
  return {};
}

/// The results two runs of mpi_worker wrote: loss, accuracy and weights within rtol 1e-5 and
/// `atol`.
void expect_same_training(const fs::path& one, const fs::path& many, double atol) {
  std::vector<char> expected = read_file(one), actual = read_file(many);
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_GT(expected.size(), 16u);
  const auto* expected_logs = reinterpret_cast<const double*>(expected.data());
  const auto* actual_logs = reinterpret_cast<const double*>(actual.data());
  EXPECT_NEAR(actual_logs[0], expected_logs[0], 1e-5 * expected_logs[0]) << "loss";
  EXPECT_NEAR(actual_logs[1], expected_logs[1], 1e-5 * expected_logs[1]) << "accuracy";
  std::span<const float> expected_weights(reinterpret_cast<const float*>(expected.data() + 16),
                                          (expected.size() - 16) / 4);
  std::vector<double> as_doubles(expected_weights.begin(), expected_weights.end());
  std::span<const float> actual_weights(reinterpret_cast<const float*>(actual.data() + 16),
                                        (actual.size() - 16) / 4);
  EXPECT_TRUE(testing::all_close(actual_weights, as_doubles, 1e-5, atol));
}

/// One process, one replica, 5 steps (of the recipe's model, or of `model_json`): what every
/// multi-worker run must reproduce.
fs::path single_process_result(const std::string& model_json = "") {
  static std::map<std::string, fs::path> results;
  if (results.count(model_json) == 0) {
    fs::path path = scratch("one" + std::to_string(results.size()) + ".bin");
    std::vector<std::string> command = {worker, path.string(), "1", "5"};
    if (!model_json.empty()) command.insert(command.end(), {"--model", model_json});
    Process single(command, scratch("single.log"));
    EXPECT_EQ(single.wait(120), 0) << single.output();
    results[model_json] = path;
  }
  return results[model_json];
}

/// Every worker of a run writing to `many` ended where one process does.
void expect_every_worker_trained_as_one(const fs::path& one, const fs::path& many, int workers,
                                        double atol = 1e-7) {
  for (int rank = 0; rank < workers; ++rank) {
    SCOPED_TRACE("worker " + std::to_string(rank));
    fs::path result = rank == 0 ? many : fs::path(many.string() + "." + std::to_string(rank));
    expect_same_training(one, result, atol);
    fs::remove(result);
  }
}

// Above one bucket (4M floats), so the bucket loop runs twice; every rank checks its own sums.
TEST(Mpi, AllReduceAboveOneBucketSumsEveryElementOnEveryRank) {
  Process job(mpirun(2, {"--allreduce", "5000000"}), scratch("allreduce.log"));
  ASSERT_EQ(job.wait(120), 0) << job.output();
  EXPECT_NE(job.output().find("rank 0 of 2: 0 of 5000000 sums wrong"), std::string::npos) << job.output();
  EXPECT_NE(job.output().find("rank 1 of 2: 0 of 5000000 sums wrong"), std::string::npos) << job.output();
}

TEST(Mpi, TwoProcessesOfTwoReplicasTrainToTheWeightsOfOne) {
  fs::path many = scratch("many.bin");
  Process job(mpirun(2, {many.string(), "2", "5"}), scratch("job.log"));
  ASSERT_EQ(job.wait(120), 0) << job.output();
  expect_every_worker_trained_as_one(single_process_result(), many, 2);
}

TEST(Mpi, TwoProcessesTrainAResidualModelToTheWeightsOfOne) {
  const std::string residual = testing::fixture_path("keras/parity_residual/model.json");
  fs::path many = scratch("many_residual.bin");
  Process job(mpirun(2, {many.string(), "1", "5", "--model", residual}), scratch("job_residual.log"));
  ASSERT_EQ(job.wait(120), 0) << job.output();
  expect_every_worker_trained_as_one(single_process_result(residual), many, 2);
}

TEST(Mpi, TwoProcessesOfTwoReplicasTrainSynchronizedBatchNormalizationAsOne) {
  // Statistics summed over 4 replicas in 2 processes while the step runs.
  const std::string model = testing::fixture_path("keras/parity_batchnorm/model_synchronized.json");
  fs::path many = scratch("many_batchnorm.bin");
  Process job(mpirun(2, {many.string(), "2", "5", "--model", model}), scratch("job_batchnorm.log"));
  ASSERT_EQ(job.wait(120), 0) << job.output();
  // atol 1e-6 as in the local replicas' test (test_strategy.cpp): one weight whose gradient
  // is near zero moves by its rounding under Adam.
  expect_every_worker_trained_as_one(single_process_result(model), many, 2, 1e-6);
}

TEST(Mpi, TwoHostsInNetworkNamespacesTrainToTheWeightsOfOneProcess) {
  fs::path many = scratch("hosts.bin");
  Process job({TENFOLD_TWO_HOSTS, worker, many.string(), "1", "5"}, scratch("hosts.log"));
  int code = job.wait(120);
  if (code == 77) GTEST_SKIP() << job.output();
  ASSERT_EQ(code, 0) << job.output();
  EXPECT_NE(job.output().find("workers on hosts: tenfold-host-a tenfold-host-b"), std::string::npos)
      << job.output();
  expect_every_worker_trained_as_one(single_process_result(), many, 2);
}

TEST(Mpi, WorkersReadingDifferentBatchesAreStopped) {
  Process job(mpirun(2, {"/dev/null", "1", "3", "--shuffle-seed-by-rank"}), scratch("unseeded.log"));
  int code = job.wait(120);
  EXPECT_NE(code, 0);
  EXPECT_NE(job.output().find("the workers trained on different batches in the same step"),
            std::string::npos)
      << job.output();
}

TEST(Mpi, AKilledWorkerEndsTheJobNamingItsRankAndHost) {
  fs::path pids_dir = scratch("killed");
  fs::create_directories(pids_dir);
  Process job(mpirun(4, {"/dev/null", "1", "1000000", "--pid-dir", pids_dir.string()}), scratch("killed.log"));
  std::vector<pid_t> pids = worker_pids(pids_dir, 4, job);
  ASSERT_EQ(pids.size(), 4u);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // well into training
  auto killed_at = Clock::now();
  kill(pids[2], SIGKILL);
  int code = job.wait(30);
  double seconds = std::chrono::duration<double>(Clock::now() - killed_at).count();
  ASSERT_NE(code, -1) << "the job still runs 30 s after a worker was killed:\n" << job.output();
  EXPECT_NE(code, 0);
  EXPECT_LT(seconds, 30);
  std::string output = job.output();
  // mpirun's own report: "process rank 2 with PID ... on node HOST exited on signal 9".
  EXPECT_NE(output.find("rank 2 with PID"), std::string::npos) << output;
  EXPECT_NE(output.find("on node " + distribute::host_name()), std::string::npos) << output;
  for (pid_t pid : pids) EXPECT_TRUE(gone_soon(pid)) << "worker " << pid << " still runs";
  fs::remove_all(pids_dir);
}

TEST(Mpi, AStoppedWorkerIsNamedAndTheJobEndsAtTheCollectiveTimeout) {
  fs::path pids_dir = scratch("stopped");
  fs::create_directories(pids_dir);
  Process job(mpirun(3, {"/dev/null", "1", "1000000", "--pid-dir", pids_dir.string()}, "4"), scratch("stopped.log"));
  std::vector<pid_t> pids = worker_pids(pids_dir, 3, job);
  ASSERT_EQ(pids.size(), 3u);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto stopped_at = Clock::now();
  kill(pids[1], SIGSTOP);
  int code = job.wait(40);
  double seconds = std::chrono::duration<double>(Clock::now() - stopped_at).count();
  ASSERT_NE(code, -1) << "the job still runs 40 s after a worker stopped:\n" << job.output();
  EXPECT_NE(code, 0);
  EXPECT_GE(seconds, 3.5);  // not before the timeout
  std::string output = job.output();
  EXPECT_NE(output.find("stopped answering: rank 1 on host " + distribute::host_name()), std::string::npos)
      << output;
  for (pid_t pid : pids) {
    EXPECT_TRUE(gone_soon(pid)) << "worker " << pid << " still exists 5 s after the job";
    kill(pid, SIGKILL);  // should it have survived, leave nothing behind
  }
  fs::remove_all(pids_dir);
}

}  // namespace
}  // namespace tenfold
