#pragma once
// keras.utils.Progbar as Keras 3's fit prints it, values in name order:
//   verbose 1:  118/118 ━━━━━━━━━━━━━━━━━━━━ 3s 25ms/step - accuracy: 0.8196 - loss: 0.5147
//   verbose 2:  118/118 - 3s - 25ms/step - accuracy: 0.8196 - loss: 0.5147
// On a terminal, verbose 1 redraws the bar in place (bold and coloured, with the ETA while the
// epoch runs); otherwise only the final line is printed, without escape codes.
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace tenfold::models {

using Logs = std::vector<std::pair<std::string, double>>;

class ProgressBar {
 public:
  /// `target_steps` may be unknown (negative): the bar then shows only the final line.
  ProgressBar(int64_t target_steps, int verbose, std::FILE* out = stdout);
  /// After step `step` (1-based) with the running values so far.
  void update(int64_t step, const Logs& logs);
  /// The epoch's last line after `steps` steps, with validation values appended.
  void finish(const Logs& logs, int64_t steps);

 private:
  /// " - name: value" for each value, sorted by name as Keras 3 prints its logs.
  std::string values(const Logs& logs) const;
  /// Seconds per step: after the first step, the later steps' mean (the first compiles), as
  /// Keras estimates it.
  double seconds_per_step(int64_t step) const;
  /// The bar: "12/118 ━━━━━━..." with the done part green on a terminal.
  std::string bar(int64_t step, int64_t target) const;
  /// Wrapped in an escape code on a terminal ("1" bold, "32" green, "37" white).
  std::string styled(const std::string& text, const char* code) const;

  int64_t target_;
  int verbose_;
  std::FILE* out_;
  bool interactive_;
  std::chrono::steady_clock::time_point start_;
  /// The first step this bar saw (a resumed epoch starts later) and when it ended.
  int64_t first_step_ = -1;
  std::chrono::steady_clock::time_point after_first_step_;
  size_t previous_width_ = 0;
};

/// Keras' number format in logs: 4 decimals, or scientific notation below 1e-3.
std::string format_log_value(double value);

}  // namespace tenfold::models
