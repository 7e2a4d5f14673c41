#pragma once
// Plans one arena for all the buffers of a compiled step, as ggml-alloc does: each buffer is
// live over an interval of the step's schedule, and buffers whose intervals do not overlap may
// share memory. Planned once at compile time; the step then allocates nothing.
#include <cstddef>
#include <vector>

namespace tenfold {

class MemoryPlan {
 public:
  /// A buffer of `bytes` live from schedule position `first_use` to `last_use`, inclusive.
  /// Returns its id.
  int add(size_t bytes, int first_use, int last_use);
  /// Widens a buffer's lifetime (for a view that aliases it).
  void extend(int id, int first_use, int last_use);
  /// Assigns offsets: largest buffers first, each at the lowest offset that overlaps no live
  /// buffer already placed. Offsets are 64-byte aligned.
  void finalize();

  size_t offset(int id) const { return buffers_.at(static_cast<size_t>(id)).offset; }
  size_t bytes(int id) const { return buffers_.at(static_cast<size_t>(id)).bytes; }
  /// Arena size after finalize().
  size_t total_bytes() const { return total_bytes_; }
  /// Sum of all buffer sizes: what the arena would need without reuse.
  size_t unshared_bytes() const;
  /// Whether two buffers' lifetimes overlap.
  bool live_together(int a, int b) const;

 private:
  struct Buffer {
    size_t bytes;
    int first_use, last_use;
    size_t offset = 0;
  };
  std::vector<Buffer> buffers_;
  size_t total_bytes_ = 0;
};

}  // namespace tenfold
