#pragma once
// keras.utils.Progbar as fit prints it:
//   verbose 1:  118/118 [==============================] - 3s 25ms/step - loss: 0.51 - accuracy: 0.82
//   verbose 2:  118/118 - 3s - loss: 0.5147 - accuracy: 0.8196 - 3s/epoch - 25ms/step
// On a terminal, verbose 1 redraws the bar in place; otherwise only the final line is printed.
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
  std::string values(const Logs& logs) const;
  double elapsed_seconds() const;

  int64_t target_;
  int verbose_;
  std::FILE* out_;
  bool interactive_;
  std::chrono::steady_clock::time_point start_;
};

/// Keras' number format in logs: 4 decimals, or scientific notation below 1e-3.
std::string format_log_value(double value);

}  // namespace tenfold::models
