#pragma once
// A bias gradient: the sum over rows of a [rows, columns] gradient. A plain loop: oneDNN's
// bias reductions inside backward-weights cost more (+5 ms at batch 512, 2 threads).
#include <algorithm>
#include <cstdint>

namespace tenfold::kernels {

/// sums[c] (+)= sum over r of values[r * columns + c]; overwritten unless `accumulate`.
inline void column_sums(const float* values, int64_t rows, int64_t columns, float* sums,
                        bool accumulate) {
  if (!accumulate) std::fill(sums, sums + columns, 0.0f);
  for (int64_t row = 0; row < rows; ++row) {
    const float* line = values + row * columns;
    for (int64_t c = 0; c < columns; ++c) sums[c] += line[c];
  }
}

}  // namespace tenfold::kernels
