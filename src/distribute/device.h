#pragma once
// Logical devices, as tf.config's: the CPU's cores split into N devices, each a group of cores
// that one replica runs on with its own thread team, so replicas run side by side instead of
// fighting over every core. A device names its kind and index; nothing else here assumes a CPU,
// so a CUDA device can stand beside it later.
#include <cstddef>
#include <string>
#include <vector>

namespace tenfold::distribute {

struct Device {
  std::string device_type;  // "CPU"
  int index = 0;
  std::vector<int> cores;   // the cores its threads are pinned to
  /// "/device:CPU:0", as TensorFlow names logical devices.
  std::string name() const { return "/device:" + device_type + ":" + std::to_string(index); }
};

/// The cores this process may run on (its affinity mask).
std::vector<int> available_cores();

/// Memory this process can still use, and where that figure comes from.
struct AvailableMemory {
  size_t bytes = 0;
  std::string source;  // "MemAvailable in /proc/meminfo", or the cgroup limit that is lower
};
/// The host's MemAvailable, or less when this process's cgroup (memory.max) leaves less. CPU
/// devices share it.
AvailableMemory available_memory();

/// Splits the available cores into `count` logical CPU devices, as evenly as they divide; with
/// more devices than cores, devices share cores round robin (for tests of many replicas).
std::vector<Device> split_cpu(int count);

/// The logical devices of this process: set by configure_logical_devices, else the default
/// split. Default: one device per core. Measured on a 2-core machine (bench/scaling.py):
/// two 1-core replicas train faster than one replica with a 2-thread team, because each
/// oneDNN call then runs without cross-core synchronisation.
std::vector<Device> list_logical_devices();
/// Sets how many logical CPU devices list_logical_devices() gives (tf.config's
/// set_logical_device_configuration). Must be >= 1.
void configure_logical_devices(int count);

}  // namespace tenfold::distribute
