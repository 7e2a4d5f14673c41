#pragma once
// Sums over the rows of [rows, columns] data. column_sums: a bias gradient, a plain loop
// (oneDNN's bias reductions inside backward-weights cost more: +5 ms at batch 512, 2 threads).
// ChunkedColumnSums: normalization statistics, in double and independent of the thread count.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "kernels/bfloat16.h"

namespace tenfold::kernels {

/// sums[c] (+)= sum over r of values[r * columns + c]; overwritten unless `accumulate`.
inline void column_sums(const float* values, int64_t rows, int64_t columns, float* sums, bool accumulate) {
  if (!accumulate) std::fill(sums, sums + columns, 0.0f);
  for (int64_t row = 0; row < rows; ++row) {
    const float* line = values + row * columns;
    for (int64_t c = 0; c < columns; ++c) sums[c] += line[c];
  }
}

/// The same over bfloat16 values, summed in float (read as their bits, kernels/bfloat16.h).
inline void column_sums(const bfloat16* values, int64_t rows, int64_t columns, float* sums, bool accumulate) {
  if (!accumulate) std::fill(sums, sums + columns, 0.0f);
  const auto* bits = reinterpret_cast<const uint16_t*>(values);
  for (int64_t row = 0; row < rows; ++row) {
    const uint16_t* __restrict line = bits + row * columns;
    float* __restrict total = sums;
    for (int64_t c = 0; c < columns; ++c) total[c] += float_from_bits(line[c]);
  }
}

/// Per-column sums in double of what a function adds per row, accumulated per fixed chunk of
/// rows (chunks in parallel), then over the chunks in order: the same result on any number of
/// threads.
class ChunkedColumnSums {
 public:
  /// Rows per chunk: big enough to amortise the chunk's bookkeeping, small enough to give
  /// every thread several chunks.
  static constexpr int64_t kChunkRows = 512;

  ChunkedColumnSums(int64_t rows, int64_t max_width)
      : rows_(rows), partial_(size_t(chunks() * max_width)) {}

  /// sums[0, width) = the sum over rows of what add(row, partial) adds into partial[0, width).
  template <typename Add>
  void run(int64_t width, const Add& add, double* sums) {
#pragma omp parallel for schedule(static)
    for (int64_t chunk = 0; chunk < chunks(); ++chunk) {
      double* partial = partial_.data() + chunk * width;
      std::fill(partial, partial + width, 0.0);
      const int64_t end = std::min(rows_, (chunk + 1) * kChunkRows);
      for (int64_t row = chunk * kChunkRows; row < end; ++row) add(row, partial);
    }
    std::fill(sums, sums + width, 0.0);
    for (int64_t chunk = 0; chunk < chunks(); ++chunk) {
      const double* partial = partial_.data() + chunk * width;
      for (int64_t i = 0; i < width; ++i) sums[i] += partial[i];
    }
  }

 private:
  int64_t chunks() const { return (rows_ + kChunkRows - 1) / kChunkRows; }

  int64_t rows_;
  std::vector<double> partial_;  // per chunk: its sums
};

}  // namespace tenfold::kernels
