#pragma once
// Timing of alternative kernels, for choices made by measurement (Conv2D's Winograd, its
// bfloat16 weight gradients, Dense's padded rows) and for the benches that report them.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tenfold::kernels {

/// Runs `runs` in turns, `rounds` times, and returns each one's best time in seconds. Turns, so
/// a noisy machine slows them alike; the best, so the first round's page faults and a burst of
/// noise do not count.
inline std::vector<double> best_seconds_in_turns(const std::vector<std::function<void()>>& runs, int rounds) {
  std::vector<double> best(runs.size(), 1e30);
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < runs.size(); ++k) {
      const auto start = std::chrono::steady_clock::now();
      runs[k]();
      best[k] = std::min(best[k], std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  return best;
}

/// decide() for the first kernel in this process that asks `question` about `shape`, its answer
/// for the others, so every replica and every call computes alike; one decision at a time (a
/// timing runs alone). Recursive, so a decision may build kernels that decide in turn (with a
/// plain mutex, kernels of Winograd's timing that timed their weight gradients deadlocked).
bool decided_once(const std::string& question, const std::vector<int64_t>& shape, const std::function<bool()>& decide);

}  // namespace tenfold::kernels
