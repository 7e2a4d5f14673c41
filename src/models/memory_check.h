#pragma once
// Out-of-memory, caught before any work: what training needs is measured from the model's own
// compiled steps and compared with what the process may use, so a batch too large for the
// machine is a clear error naming the largest batch that fits, instead of a crash mid-epoch.
#include <cstdint>
#include <string>

#include "models/model.h"

namespace tenfold::models {

/// One replica's memory for a per-replica batch of b: fixed + per_sample * b bytes.
struct ReplicaMemory {
  double fixed_bytes = 0;
  double bytes_per_sample = 0;
  double bytes(int64_t batch) const { return fixed_bytes + bytes_per_sample * double(batch); }
};

/// Compiles the model's training and evaluation steps at two small batches and measures what
/// they hold (activation arena, gradients, kernel scratchpads, the input); memory grows
/// linearly in the batch, so two points give the line. The model must be built.
ReplicaMemory measure_replica_memory(const Model& model);

/// Throws ErrorCode::resource_exhausted when training the compiled model with `global_batch`
/// (split over its strategy's replicas, as fit does) needs more than `available_bytes`. The
/// message names the need, what is available (`available_source` says where that figure comes
/// from) and the largest per-replica and global batch that fit.
void check_training_memory(const Model& model, int64_t global_batch, size_t available_bytes,
                           const std::string& available_source);

/// "1.5 GiB", "312.0 MiB", "48.0 KiB", "12 bytes".
std::string format_bytes(double bytes);

}  // namespace tenfold::models
