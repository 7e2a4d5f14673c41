#include "graph/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "core/tensor.h"

namespace tenfold {

int MemoryPlan::add(size_t bytes, int first_use, int last_use) {
  buffers_.push_back({aligned_size(bytes), first_use, last_use});
  return static_cast<int>(buffers_.size()) - 1;
}

void MemoryPlan::extend(int id, int first_use, int last_use) {
  Buffer& buffer = buffers_.at(static_cast<size_t>(id));
  buffer.first_use = std::min(buffer.first_use, first_use);
  buffer.last_use = std::max(buffer.last_use, last_use);
}

bool MemoryPlan::live_together(int a, int b) const {
  const Buffer& x = buffers_.at(static_cast<size_t>(a));
  const Buffer& y = buffers_.at(static_cast<size_t>(b));
  return x.first_use <= y.last_use && y.first_use <= x.last_use;
}

void MemoryPlan::finalize() {
  std::vector<int> order(buffers_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return buffers_[size_t(a)].bytes > buffers_[size_t(b)].bytes; });
  std::vector<int> placed;
  total_bytes_ = 0;
  for (int id : order) {
    Buffer& buffer = buffers_[size_t(id)];
    // Occupied ranges of live buffers, by offset; take the first gap that fits.
    std::vector<std::pair<size_t, size_t>> occupied;
    for (int other : placed) {
      if (live_together(id, other)) {
        occupied.push_back({buffers_[size_t(other)].offset,
                            buffers_[size_t(other)].offset + buffers_[size_t(other)].bytes});
      }
    }
    std::sort(occupied.begin(), occupied.end());
    size_t candidate = 0;
    for (const auto& [begin, end] : occupied) {
      if (candidate + buffer.bytes <= begin) break;
      candidate = std::max(candidate, end);
    }
    buffer.offset = candidate;
    total_bytes_ = std::max(total_bytes_, candidate + buffer.bytes);
    placed.push_back(id);
  }
}

size_t MemoryPlan::unshared_bytes() const {
  size_t sum = 0;
  for (const Buffer& buffer : buffers_) sum += buffer.bytes;
  return sum;
}

}  // namespace tenfold
