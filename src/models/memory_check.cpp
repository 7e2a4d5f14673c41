#include "models/memory_check.h"

#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace tenfold::models {

ReplicaMemory measure_replica_memory(const Model& model) {
  check_argument(model.built(), "build the model before measuring its memory");
  auto bytes_at = [&](int64_t batch) {
    size_t before = allocated_bytes();
    CompiledStep training(model.graph(), batch, true);
    CompiledStep evaluation(model.graph(), batch, false);
    return double(allocated_bytes() - before);
  };
  // Batches large enough that oneDNN picks the algorithms (and scratchpads) of real batches.
  constexpr int64_t small = 64, large = 128;
  double at_small = bytes_at(small), at_large = bytes_at(large);
  double per_sample = std::max(0.0, (at_large - at_small) / double(large - small));
  return {std::max(0.0, at_small - per_sample * double(small)), per_sample};
}

void check_training_memory(const Model& model, int64_t global_batch, size_t available_bytes,
                           const std::string& available_source) {
  const distribute::Strategy& strategy = model.strategy();
  const int64_t replicas = strategy.num_replicas_in_sync();
  const int64_t local = strategy.num_local_replicas();
  ReplicaMemory replica = measure_replica_memory(model);
  // Each worker also holds the global batch as read from the pipeline and the one prefetched.
  const double input_per_sample =
      2.0 * double(model.input_shape().num_elements() * int64_t(sizeof(float)) + int64_t(sizeof(int32_t)));
  auto need = [&](int64_t per_replica) {
    return double(local) * replica.bytes(per_replica) + input_per_sample * double(per_replica * replicas);
  };
  const int64_t per_replica = (global_batch + replicas - 1) / replicas;
  const double needed = need(per_replica);
  if (needed <= double(available_bytes)) return;

  const double room = double(available_bytes) - double(local) * replica.fixed_bytes;
  const double per_sample = double(local) * replica.bytes_per_sample + input_per_sample * double(replicas);
  const int64_t fits = room > 0 ? int64_t(std::floor(room / per_sample)) : 0;
  std::string message = "not enough memory for a global batch of " + std::to_string(global_batch) +
                        ": training needs " + format_bytes(needed) + " (" +
                        format_bytes(replica.bytes(per_replica)) + " per replica for " +
                        std::to_string(per_replica) + " samples each, x " + std::to_string(local) +
                        " local replica" + (local == 1 ? "" : "s") + ", plus the input batches)" +
                        " but " + format_bytes(double(available_bytes)) + " is available (" +
                        available_source + ")";
  if (fits >= 1) {
    message += "; the largest per-replica batch that fits is " + std::to_string(fits) +
               " (global batch " + std::to_string(fits * replicas) + " on " +
               std::to_string(replicas) + " replica" + (replicas == 1 ? "" : "s") +
               "): use a batch size of at most that";
  } else {
    message += "; not even a batch of 1 per replica fits: free memory, or use fewer local devices";
  }
  throw Error(ErrorCode::resource_exhausted, message);
}

std::string format_bytes(double bytes) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(int64_t(bytes)) + " bytes";
  int unit = -1;
  while (bytes >= 1024 && unit < 3) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", bytes, units[unit]);
  return text;
}

}  // namespace tenfold::models
