#include "distribute/mpi_communicator.h"

// The C API only: OpenMPI's deprecated C++ bindings would need another library.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/error.h"

namespace tenfold::distribute {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int arrival_tag_base = 1000;
constexpr int arrival_tags = 16384;
constexpr int ping_tag = 100, pong_tag = 101;
// How long a worker that timed out waits for the suspects' answers to its ping.
constexpr double ping_wait_seconds = 2;
// Large sums go in buckets: MPI counts are ints, and buckets bound the temporary memory.
constexpr int64_t bucket_elements = int64_t(1) << 22;

class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(double timeout_seconds) : timeout_(timeout_seconds) {
    int provided = 0;
    // The watchdog thread makes MPI calls while the main thread waits in a collective.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
      throw Error(ErrorCode::unavailable, "this MPI library does not support MPI_THREAD_MULTIPLE, "
                                          "which Tenfold's collective watchdog needs; use OpenMPI "
                                          "4 (Debian's openmpi-bin)");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    char name[64] = {};
    std::snprintf(name, sizeof name, "%s", host_name().c_str());
    std::vector<char> names(size_t(size_) * sizeof name);
    MPI_Allgather(name, sizeof name, MPI_CHAR, names.data(), sizeof name, MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < size_; ++r) hosts_.emplace_back(names.data() + size_t(r) * sizeof name);
    watchdog_ = std::thread([this] { watch(); });
  }

  ~MpiCommunicator() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    watchdog_.join();
    MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::vector<std::string>& hosts() const override { return hosts_; }
  void allreduce_sum(float* values, int64_t count) override { allreduce(values, count, MPI_FLOAT); }
  void allreduce_sum(double* values, int64_t count) override { allreduce(values, count, MPI_DOUBLE); }

 private:
  // A blocking MPI_Allreduce (the fastest algorithms: MPI_Iallreduce took 2.3x as long on
  // shared memory), watched by the watchdog thread.
  template <typename T>
  void allreduce(T* values, int64_t count, MPI_Datatype type) {
    for (int64_t begin = 0; begin < count; begin += bucket_elements) {
      int n = int(std::min(bucket_elements, count - begin));
      {
        std::lock_guard<std::mutex> lock(mutex_);
        announce_arrival();
        started_ = Clock::now();
        in_collective_ = true;
        patience_used_ = 0;
      }
      MPI_Allreduce(MPI_IN_PLACE, values + begin, n, type, MPI_SUM, MPI_COMM_WORLD);
      std::lock_guard<std::mutex> lock(mutex_);
      in_collective_ = false;
      MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    }
  }

  /// Tells every other worker this one has reached collective number sequence_, and listens
  /// for theirs.
  void announce_arrival() {
    ++sequence_;
    int tag = arrival_tag_base + int(sequence_ % arrival_tags);
    arrivals_.assign(size_t(size_), 0);
    requests_.clear();
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      requests_.emplace_back();
      MPI_Irecv(&arrivals_[size_t(peer)], 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &requests_.back());
      requests_.emplace_back();
      MPI_Isend(&one_, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &requests_.back());
    }
  }

  static Clock::duration seconds(double value) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(value));
  }

  /// The watchdog: answers other workers' pings, and ends the job when a collective of this
  /// worker outlives the timeout.
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      changed_.wait_for(lock, std::chrono::milliseconds(5));
      answer_pings();
      if (in_collective_ && Clock::now() - started_ > seconds(timeout_)) abort_naming_stalled();
    }
  }

  /// "Are you alive?" from a worker whose collective timed out.
  void answer_pings() {
    int pending = 1;
    while (pending) {
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, ping_tag, MPI_COMM_WORLD, &pending, &status);
      if (!pending) return;
      int value = 0;
      MPI_Recv(&value, 1, MPI_INT, status.MPI_SOURCE, ping_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&value, 1, MPI_INT, status.MPI_SOURCE, pong_tag, MPI_COMM_WORLD);
    }
  }

  /// The collective timed out. Suspects are the workers that never arrived at it (or all, when
  /// all arrived and the collective itself hangs). A suspect that is only waiting, blocked in an
  /// earlier collective by the stalled one, answers a ping; the ones that do not are named.
  /// Returns only when every suspect answered (they are busy, not stalled).
  void abort_naming_stalled() {
    std::vector<int> suspects;
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      // Receives are requests_[0], [2], ... in peer order (sends in between).
      size_t index = 2 * size_t(peer < rank_ ? peer : peer - 1);
      int arrived = 0;
      MPI_Request_get_status(requests_[index], &arrived, MPI_STATUS_IGNORE);
      if (!arrived) suspects.push_back(peer);
    }
    if (suspects.empty()) {
      for (int peer = 0; peer < size_; ++peer) {
        if (peer != rank_) suspects.push_back(peer);
      }
    }
    std::vector<int> pongs(suspects.size(), 0), answered(suspects.size(), 0);
    std::vector<MPI_Request> pings(suspects.size()), replies(suspects.size());
    for (size_t i = 0; i < suspects.size(); ++i) {
      MPI_Isend(&one_, 1, MPI_INT, suspects[i], ping_tag, MPI_COMM_WORLD, &pings[i]);
      MPI_Irecv(&pongs[i], 1, MPI_INT, suspects[i], pong_tag, MPI_COMM_WORLD, &replies[i]);
    }
    Clock::time_point deadline = Clock::now() + seconds(ping_wait_seconds);
    while (Clock::now() < deadline) {
      answer_pings();
      for (size_t i = 0; i < suspects.size(); ++i) {
        if (!answered[i]) MPI_Test(&replies[i], &answered[i], MPI_STATUS_IGNORE);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::string stalled;
    for (size_t i = 0; i < suspects.size(); ++i) {
      if (answered[i]) continue;
      stalled += (stalled.empty() ? "" : ", ") + std::string("rank ") +
                 std::to_string(suspects[i]) + " on host " + hosts_[size_t(suspects[i])];
    }
    if (stalled.empty()) {
      // Every suspect answers: they are busy (a checkpoint being written, say), not stalled.
      // Keep waiting, up to three timeouts in all, before calling the collective hung.
      if (++patience_used_ < 3) {
        started_ = Clock::now();
        return;
      }
      stalled = "none: every worker answers, the collective itself hangs";
    }
    std::fprintf(stderr,
                 "tenfold: deadline exceeded: worker rank %d waited %.0f s in all-reduce #%llu; "
                 "stopped answering: %s. That worker stopped, hung or is far slower; ending the "
                 "whole job (raise the limit with TENFOLD_COLLECTIVE_TIMEOUT=seconds).\n",
                 rank_, timeout_, static_cast<unsigned long long>(sequence_), stalled.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    std::abort();
  }

  double timeout_;
  int rank_ = 0, size_ = 1;
  std::vector<std::string> hosts_;
  int one_ = 1;
  // Guarded by mutex_: the collective in progress, seen by the watchdog.
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false, in_collective_ = false;
  Clock::time_point started_;
  int patience_used_ = 0;  // timeouts of this collective in which every worker still answered
  uint64_t sequence_ = 0;
  std::vector<int> arrivals_;
  std::vector<MPI_Request> requests_;
  std::thread watchdog_;  // last: started once everything above exists
};

}  // namespace

bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("SLURM_PROCID") != nullptr;
}

std::shared_ptr<Communicator> mpi_world(double collective_timeout_seconds) {
  static std::weak_ptr<Communicator> world;
  static bool finalized = false;
  if (auto existing = world.lock()) return existing;
  if (finalized) {
    throw Error(ErrorCode::internal, "MPI was already finalised in this process; keep one "
                                     "multi-worker strategy alive for the whole job");
  }
  std::shared_ptr<Communicator> created(new MpiCommunicator(collective_timeout_seconds),
                                        [](Communicator* c) {
                                          finalized = true;
                                          delete c;
                                        });
  world = created;
  return created;
}

}  // namespace tenfold::distribute
