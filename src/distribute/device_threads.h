#pragma once
// One long-lived thread per logical device, pinned to the device's cores, with an OpenMP team
// of that many threads (so oneDNN calls of one replica use its cores alone). run() hands every
// thread its task and waits for all of them: the replicas of a step run side by side.
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "distribute/device.h"

namespace tenfold::distribute {

class DeviceThreads {
 public:
  explicit DeviceThreads(std::vector<Device> devices);
  ~DeviceThreads();
  DeviceThreads(const DeviceThreads&) = delete;
  DeviceThreads& operator=(const DeviceThreads&) = delete;

  int size() const { return int(devices_.size()); }
  /// task(i) on device i's thread, for every device; returns when all are done and rethrows
  /// the first error. With one device the task runs on the calling thread.
  void run(const std::function<void(int device)>& task);

 private:
  void serve(int device);

  std::vector<Device> devices_;
  std::mutex mutex_;
  std::condition_variable changed_;
  const std::function<void(int)>* task_ = nullptr;
  uint64_t generation_ = 0;  // counts run() calls; a thread runs each generation once
  int pending_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;  // last: started once everything above exists
};

}  // namespace tenfold::distribute
