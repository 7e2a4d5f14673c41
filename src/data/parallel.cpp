// The operators that run on background threads: map with num_parallel_calls, and prefetch.
// Each iterator owns its threads: destroying it stops and joins them. An exception in a map
// function or an input reaches the consumer's next() in the element's place.
//
// AUTOTUNE: prefetch starts with a buffer of 1 element and doubles it (up to 64) each time the
// consumer finds it empty; a map with AUTOTUNE starts with 1 thread and adds one (up to one
// per core) each time the consumer finds its next element not ready.
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "core/error.h"
#include "data/operator.h"

namespace tenfold::data {

namespace {

constexpr int64_t max_autotuned_buffer = 64;

class PrefetchIterator : public Iterator {
 public:
  PrefetchIterator(std::unique_ptr<Iterator> source, int64_t buffer_size)
      : source_(std::move(source)),
        autotune_(buffer_size == AUTOTUNE),
        capacity_(buffer_size == AUTOTUNE ? 1 : buffer_size),
        thread_([this] { produce(); }) {}

  ~PrefetchIterator() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  std::optional<Element> next() override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (queue_.empty() && !done_ && autotune_ && capacity_ < max_autotuned_buffer) {
      capacity_ *= 2;  // the consumer is waiting: produce further ahead
      changed_.notify_all();
    }
    changed_.wait(lock, [this] { return !queue_.empty() || done_; });
    if (!queue_.empty()) {
      Element element = std::move(queue_.front());
      queue_.pop_front();
      changed_.notify_all();
      return element;
    }
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return std::nullopt;
  }

 private:
  void produce() {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [this] { return stop_ || int64_t(queue_.size()) < capacity_; });
        if (stop_) return;
      }
      std::optional<Element> element;
      std::exception_ptr error;
      try {
        element = source_->next();
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (element) {
        queue_.push_back(std::move(*element));
      } else {
        error_ = std::move(error);  // moved: this thread keeps no reference to the exception
        done_ = true;
      }
      changed_.notify_all();
      if (done_) return;
    }
  }

  std::unique_ptr<Iterator> source_;
  bool autotune_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Element> queue_;
  int64_t capacity_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: starts once everything above exists
};

/// map with worker threads; results are handed out in input order.
class ParallelMapIterator : public Iterator {
 public:
  /// `threads` workers, or with `autotune` 1 growing to `threads` while the consumer waits.
  /// Results may run 16 per worker ahead of the consumer: with 2, workers and consumer woke
  /// each other for every element (measured, 32x32 JPEGs decoded on 2 cores: 35k images/s with
  /// 2 per worker, 49k with 16).
  ParallelMapIterator(std::unique_ptr<Iterator> source,
                      std::function<Element(const Element&)> fn, int64_t threads, bool autotune)
      : source_(std::move(source)),
        fn_(std::move(fn)),
        max_threads_(threads),
        max_in_flight_(16 * threads) {
    for (int64_t i = 0; i < (autotune ? 1 : threads); ++i) workers_.emplace_back([this] { work(); });
  }

  ~ParallelMapIterator() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  std::optional<Element> next() override {
    std::unique_lock<std::mutex> lock(mutex_);
    auto ready = [this] { return results_.count(delivered_) > 0 || (end_ >= 0 && delivered_ >= end_); };
    if (!ready() && int64_t(workers_.size()) < max_threads_) {
      workers_.emplace_back([this] { work(); });  // the consumer waits: map wider
    }
    changed_.wait(lock, ready);
    auto found = results_.find(delivered_);
    if (found == results_.end()) return std::nullopt;
    Result result = std::move(found->second);
    results_.erase(found);
    ++delivered_;
    changed_.notify_all();
    if (result.error) std::rethrow_exception(result.error);
    return std::move(result.value);
  }

 private:
  struct Result {
    Element value;
    std::exception_ptr error;
  };

  void work() {
    while (true) {
      int64_t ticket;
      std::optional<Element> input;
      std::exception_ptr error;
      {
        // Pull the next input and number it, one worker at a time, so numbers follow the
        // input's order.
        std::lock_guard<std::mutex> pulling(input_mutex_);
        {
          std::unique_lock<std::mutex> lock(mutex_);
          changed_.wait(lock, [this] { return stop_ || end_ >= 0 || next_ticket_ - delivered_ < max_in_flight_; });
          if (stop_ || end_ >= 0) return;
          ticket = next_ticket_++;
        }
        try {
          input = source_->next();
        } catch (...) {
          error = std::current_exception();
        }
        if (!input) {
          std::lock_guard<std::mutex> lock(mutex_);
          end_ = error ? ticket + 1 : ticket;
          if (error) results_[ticket] = Result{{}, std::move(error)};
          changed_.notify_all();
          return;
        }
      }
      Result result;
      try {
        result.value = fn_(*input);
      } catch (...) {
        result.error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex_);
      results_[ticket] = std::move(result);
      changed_.notify_all();
    }
  }

  std::unique_ptr<Iterator> source_;
  std::function<Element(const Element&)> fn_;
  const int64_t max_threads_, max_in_flight_;
  std::mutex input_mutex_, mutex_;
  std::condition_variable changed_;
  std::map<int64_t, Result> results_;
  int64_t next_ticket_ = 0, delivered_ = 0, end_ = -1;
  bool stop_ = false;
  std::vector<std::thread> workers_;  // last: started once everything above exists
};

}  // namespace

Dataset Dataset::map(std::function<Element(const Element&)> fn, int64_t num_parallel_calls,
                     std::vector<TensorSpec> output_spec) const {
  check_argument(num_parallel_calls >= 1 || num_parallel_calls == AUTOTUNE,
                 "map needs num_parallel_calls >= 1 or AUTOTUNE, got " + std::to_string(num_parallel_calls));
  bool autotune = num_parallel_calls == AUTOTUNE;
  int64_t threads = autotune ? std::max<int64_t>(1, int64_t(std::thread::hardware_concurrency()))
                             : num_parallel_calls;
  auto iterate = [fn, threads, autotune](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    if (threads > 1) {
      return std::make_unique<ParallelMapIterator>(input.iterate(epoch), fn, threads, autotune);
    }
    auto source = shared_iterator(input, epoch);
    return std::make_unique<FunctionIterator>([source, fn]() -> std::optional<Element> {
      auto element = source->next();
      if (!element) return std::nullopt;
      return fn(*element);
    });
  };
  return Dataset(std::make_shared<Unary>(impl_, iterate, cardinality(), std::move(output_spec)));
}

Dataset Dataset::prefetch(int64_t buffer_size) const {
  check_argument(buffer_size >= 1 || buffer_size == AUTOTUNE,
                 "prefetch needs buffer_size >= 1 or AUTOTUNE, got " + std::to_string(buffer_size));
  auto iterate = [buffer_size](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    return std::make_unique<PrefetchIterator>(input.iterate(epoch), buffer_size);
  };
  return Dataset(std::make_shared<Unary>(impl_, iterate, cardinality(), element_spec()));
}

}  // namespace tenfold::data
