#include "distribute/cross_replica_sum.h"

#include <algorithm>

#include "core/error.h"

namespace tenfold::distribute {

CrossReplicaSum::CrossReplicaSum(int local_replicas, Communicator* workers)
    : workers_(workers), active_(size_t(local_replicas), true), parts_(size_t(local_replicas)) {}

void CrossReplicaSum::set_active(std::vector<bool> active) {
  std::lock_guard<std::mutex> lock(mutex_);
  check_argument(active.size() == parts_.size(), "one flag per local replica");
  active_ = std::move(active);
}

void CrossReplicaSum::all_reduce(int replica, std::span<double> values) {
  std::unique_lock<std::mutex> lock(mutex_);
  parts_[size_t(replica)] = values;
  const int expected = int(std::count(active_.begin(), active_.end(), true));
  if (++arrived_ < expected) {
    const uint64_t round = round_;
    done_.wait(lock, [&] { return round_ != round; });
  } else {
    // The last to arrive adds the parts in replica order (the same floats whichever thread
    // it is), then across workers; the others wait meanwhile.
    total_.assign(values.size(), 0.0);
    for (size_t r = 0; r < parts_.size(); ++r) {
      if (!active_[r]) continue;
      check_argument(parts_[r].size() == values.size(), "replicas summed values of different lengths");
      for (size_t i = 0; i < values.size(); ++i) total_[i] += parts_[r][i];
    }
    if (workers_ != nullptr) workers_->allreduce_sum(total_.data(), int64_t(total_.size()));
    arrived_ = 0;
    ++round_;
    done_.notify_all();
  }
  // total_ stays until every active replica has arrived at the next round, after this copy.
  std::copy(total_.begin(), total_.end(), values.begin());
}

}  // namespace tenfold::distribute
