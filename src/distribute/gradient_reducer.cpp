#include "distribute/gradient_reducer.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace tenfold::distribute {

GradientReducer::GradientReducer(Communicator& communicator, int local_replicas, int64_t size,
                                 int64_t bucket_elements)
    : communicator_(communicator),
      local_replicas_(local_replicas),
      buffers_(size_t(local_replicas)),
      reported_(size_t(local_replicas)),
      buckets_(size_t(std::max<int64_t>(1, (size + bucket_elements - 1) / bucket_elements))),
      bucket_summed_(buckets_.size()) {
  for (size_t b = 0; b < buckets_.size(); ++b) {
    buckets_[b].end = size - int64_t(b) * bucket_elements;
    buckets_[b].begin = std::max<int64_t>(0, buckets_[b].end - bucket_elements);
  }
  if (communicator_.size() > 1) thread_ = std::thread([this] { communicate(); });
}

GradientReducer::~GradientReducer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GradientReducer::start_step() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Bucket& bucket : buckets_) bucket.replicas_done = 0;
  std::fill(bucket_summed_.begin(), bucket_summed_.end(), false);
  summed_ = reduced_ = 0;
}

void GradientReducer::begin(int replica, Tensor& buffer) {
  if (buffer.num_elements() != buckets_[0].end) {
    throw Error(ErrorCode::internal, "a gradient buffer of " + std::to_string(buffer.num_elements()) +
                                         " floats for a reducer of " + std::to_string(buckets_[0].end));
  }
  buffers_[size_t(replica)] = buffer.data<float>();
  reported_[size_t(replica)] = buckets_[0].end + 1;  // nothing reported yet
}

void GradientReducer::ready(int replica, int64_t offset) {
  int64_t& reported = reported_[size_t(replica)];
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const Bucket& bucket = buckets_[b];
    // Newly final for this replica: at or after `offset`, and not before this report.
    if (bucket.begin < offset || bucket.begin >= reported) continue;
    if (buckets_[b].replicas_done.fetch_add(1) + 1 == local_replicas_) reduce_locally(b);
  }
  reported = std::min(reported, offset);
}

void GradientReducer::reduce_locally(size_t b) {
  const Bucket& bucket = buckets_[b];
  // In replica order, as a sum of the whole buffers would be: the same floats.
  float* target = buffers_[0];
  for (int other = 1; other < local_replicas_; ++other) {
    const float* source = buffers_[size_t(other)];
    for (int64_t i = bucket.begin; i < bucket.end; ++i) target[i] += source[i];
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    bucket_summed_[b] = true;
    while (summed_ < buckets_.size() && bucket_summed_[summed_]) ++summed_;
  }
  changed_.notify_all();
}

void GradientReducer::communicate() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stop_ || reduced_ < summed_; });
    if (stop_) return;
    const Bucket& bucket = buckets_[reduced_];
    lock.unlock();
    communicator_.allreduce_sum(buffers_[0] + bucket.begin, bucket.end - bucket.begin);
    lock.lock();
    ++reduced_;
    changed_.notify_all();
  }
}

double GradientReducer::finish() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  const size_t target = communicator_.size() > 1 ? buckets_.size() : 0;
  changed_.wait(lock, [&] { return summed_ == buckets_.size() && reduced_ >= target; });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tenfold::distribute
