#include "distribute/device_threads.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <utility>

namespace tenfold::distribute {

namespace {

void pin_to(const Device& device) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int core : device.cores) CPU_SET(core, &mask);
  pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);  // best effort: a hint
  omp_set_num_threads(int(device.cores.size()));
}

}  // namespace

DeviceThreads::DeviceThreads(std::vector<Device> devices) : devices_(std::move(devices)) {
  if (devices_.size() <= 1) return;
  for (int i = 0; i < size(); ++i) threads_.emplace_back([this, i] { serve(i); });
}

DeviceThreads::~DeviceThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void DeviceThreads::run(const std::function<void(int)>& task) {
  if (threads_.empty()) {
    task(0);
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  task_ = &task;
  pending_ = size();
  error_ = nullptr;
  ++generation_;
  changed_.notify_all();
  changed_.wait(lock, [this] { return pending_ == 0; });
  task_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void DeviceThreads::serve(int device) {
  pin_to(devices_[size_t(device)]);
  uint64_t done = 0;
  while (true) {
    const std::function<void(int)>* task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || generation_ != done; });
      if (stop_) return;
      done = generation_;
      task = task_;
    }
    std::exception_ptr error;
    try {
      (*task)(device);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    // Handed over, or dropped, under the lock: a reference this thread released after it
    // could free the exception while run()'s caller reads it (libstdc++'s atomic count, which
    // ThreadSanitizer does not see, made that a race report).
    if (error && !error_) error_ = std::move(error);
    error = nullptr;
    if (--pending_ == 0) changed_.notify_all();
  }
}

}  // namespace tenfold::distribute
