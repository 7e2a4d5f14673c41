#pragma once
// Sums values over the replicas of a training step while the step runs: Keras'
// replica_context.all_reduce(SUM), what a synchronized BatchNormalization needs for statistics
// over the global batch. Every active replica calls all_reduce with values of the same length,
// in the same order; each gets the sum over the local replicas (added in replica order) and,
// with several workers, over the workers.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "distribute/communicator.h"

namespace tenfold::distribute {

class CrossReplicaSum {
 public:
  /// `workers` null: one worker.
  CrossReplicaSum(int local_replicas, Communicator* workers);

  /// Before a step: the replicas with rows. Those without rows run nothing and are left out.
  void set_active(std::vector<bool> active);
  /// Called by every active replica; returns when `values` holds the sum.
  void all_reduce(int replica, std::span<double> values);

 private:
  Communicator* workers_;
  std::vector<bool> active_;
  std::vector<std::span<double>> parts_;  // per replica, this round
  std::vector<double> total_;
  int arrived_ = 0;
  uint64_t round_ = 0;
  std::mutex mutex_;
  std::condition_variable done_;
};

}  // namespace tenfold::distribute
