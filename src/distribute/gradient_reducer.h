#pragma once
// Sums the weight gradients of a step over the local replicas and all-reduces them across
// workers in buckets, as backward produces them (PyTorch DDP's reducer). Backward runs from
// the last layer to the first, so a replica's gradient buffer becomes final from its end
// towards its start. A bucket (a range of the buffer) is summed over the replicas by the last
// replica to finish it, and all-reduced by a communication thread while backward goes on with
// the layers before it. After the last gradient, only the buckets still in flight are waited
// for, instead of the whole buffer.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "core/tensor.h"
#include "distribute/communicator.h"

namespace tenfold::distribute {

class GradientReducer {
 public:
  /// For buffers of `size` floats on `local_replicas` replicas; buckets of `bucket_elements`.
  GradientReducer(Communicator& communicator, int local_replicas, int64_t size, int64_t bucket_elements);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  /// Before the replicas start a step.
  void start_step();
  /// Replica `replica`'s gradients are in `buffer` (of the size the reducer was made for).
  /// Call on every replica before it reports.
  void begin(int replica, Tensor& buffer);
  /// Replica `replica`'s gradients from `offset` to the end of its buffer are final.
  void ready(int replica, int64_t offset);
  /// After every replica reported offset 0: waits for the buckets in flight. The sum over all
  /// replicas of all workers is then in replica 0's buffer. Returns the seconds waited.
  double finish();

 private:
  struct Bucket {
    int64_t begin, end;
    std::atomic<int> replicas_done{0};
  };
  /// Sums bucket `b` over the replicas into replica 0's buffer, then hands it on.
  void reduce_locally(size_t b);
  /// The communication thread: all-reduces the buckets in order (every worker must issue its
  /// collectives in the same order).
  void communicate();

  Communicator& communicator_;
  const int local_replicas_;
  std::vector<float*> buffers_;
  std::vector<int64_t> reported_;  // per replica: the offset it last reported
  std::vector<Bucket> buckets_;    // from the end of the buffer: bucket 0 is the last range
  std::mutex mutex_;
  std::condition_variable changed_;
  size_t summed_ = 0;    // buckets summed over local replicas, guarded by mutex_ (in order)
  std::vector<bool> bucket_summed_;
  size_t reduced_ = 0;   // buckets all-reduced, guarded by mutex_
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tenfold::distribute
