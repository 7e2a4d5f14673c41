#include "distribute/device.h"

#include <sched.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>

#include "core/error.h"

namespace tenfold::distribute {

namespace {
std::mutex configuration_mutex;
std::optional<int> configured_count;
}  // namespace

std::vector<int> available_cores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &mask)) cores.push_back(cpu);
    }
  }
  if (cores.empty()) cores.push_back(0);
  return cores;
}

namespace {

/// The first number in `path` (a memory.max or memory.current file), if it holds one.
std::optional<size_t> read_number(const std::string& path) {
  std::ifstream in(path);
  size_t value = 0;
  if (in >> value) return value;
  return std::nullopt;  // absent, or "max": no limit
}

}  // namespace

AvailableMemory available_memory() {
  AvailableMemory memory{0, "MemAvailable in /proc/meminfo"};
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %llu kB", &kib) == 1) memory.bytes = size_t(kib) * 1024;
  }
  // cgroup v2, as containers set it: the limit less what the group already uses.
  auto limit = read_number("/sys/fs/cgroup/memory.max");
  auto used = read_number("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    size_t left = *limit > *used ? *limit - *used : 0;
    if (memory.bytes == 0 || left < memory.bytes) {
      memory = {left, "the cgroup's limit /sys/fs/cgroup/memory.max, less what it uses"};
    }
  }
  return memory;
}

std::vector<Device> split_cpu(int count) {
  check_argument(count >= 1, "the number of devices must be >= 1, got " + std::to_string(count));
  std::vector<int> cores = available_cores();
  std::vector<Device> devices;
  const size_t n = size_t(count);
  for (size_t i = 0; i < n; ++i) {
    Device device{"CPU", int(i), {}};
    if (n <= cores.size()) {
      // Contiguous, even groups: device i gets cores [i*C/n, (i+1)*C/n).
      for (size_t c = i * cores.size() / n; c < (i + 1) * cores.size() / n; ++c) {
        device.cores.push_back(cores[c]);
      }
    } else {
      device.cores.push_back(cores[i % cores.size()]);
    }
    devices.push_back(device);
  }
  return devices;
}

std::vector<Device> list_logical_devices() {
  std::lock_guard<std::mutex> lock(configuration_mutex);
  return split_cpu(configured_count.value_or(int(available_cores().size())));
}

void configure_logical_devices(int count) {
  check_argument(count >= 1, "the number of devices must be >= 1, got " + std::to_string(count));
  std::lock_guard<std::mutex> lock(configuration_mutex);
  configured_count = count;
}

}  // namespace tenfold::distribute
