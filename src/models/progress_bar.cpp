#include "models/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace tenfold::models {

namespace {

constexpr int bar_width = 20;

double seconds_between(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

/// Keras' time per step: " 25ms/step".
std::string format_step_time(double seconds) {
  char text[32];
  if (seconds >= 1 || seconds == 0) {
    std::snprintf(text, sizeof text, " %.0fs/step", seconds);
  } else if (seconds >= 1e-3) {
    std::snprintf(text, sizeof text, " %.0fms/step", seconds * 1e3);
  } else {
    std::snprintf(text, sizeof text, " %.0fus/step", seconds * 1e6);
  }
  return text;
}

/// Keras' ETA: "5s", "2:05", "1:02:05".
std::string format_eta(double seconds) {
  char text[32];
  const long whole = long(seconds);
  if (seconds > 3600) {
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", whole / 3600, whole % 3600 / 60, whole % 60);
  } else if (seconds > 60) {
    std::snprintf(text, sizeof text, "%ld:%02ld", whole / 60, whole % 60);
  } else {
    std::snprintf(text, sizeof text, "%lds", whole);
  }
  return text;
}

}  // namespace

std::string format_log_value(double value) {
  char text[32];
  std::snprintf(text, sizeof text, std::fabs(value) > 1e-3 || value == 0 ? "%.4f" : "%.4e", value);
  return text;
}

ProgressBar::ProgressBar(int64_t target_steps, int verbose, std::FILE* out)
    : target_(target_steps),
      verbose_(verbose),
      out_(out),
      interactive_(isatty(fileno(out)) != 0),
      start_(std::chrono::steady_clock::now()) {}

std::string ProgressBar::values(const Logs& logs) const {
  Logs sorted = logs;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text;
  for (const auto& [name, value] : sorted) text += " - " + name + ": " + format_log_value(value);
  return text;
}

double ProgressBar::seconds_per_step(int64_t step) const {
  const auto now = std::chrono::steady_clock::now();
  if (first_step_ >= 0 && step > first_step_) return seconds_between(after_first_step_, now) / double(step - first_step_);
  return first_step_ >= 0 ? seconds_between(start_, now) : 0;
}

std::string ProgressBar::styled(const std::string& text, const char* code) const {
  return interactive_ ? std::string("\x1b[") + code + "m" + text + "\x1b[0m" : text;
}

std::string ProgressBar::bar(int64_t step, int64_t target) const {
  const std::string digits = std::to_string(target);
  char count[48];
  std::snprintf(count, sizeof count, "%*lld/%s", int(digits.size()), (long long)step, digits.c_str());
  const int done = int(bar_width * step / target);
  auto line = [](int length) {
    std::string text;
    for (int i = 0; i < length; ++i) text += "\u2501";  // ━
    return text;
  };
  return styled(count, "1") + " " + styled(line(done), "32") + styled(line(bar_width - done), "37");
}

void ProgressBar::update(int64_t step, const Logs& logs) {
  if (first_step_ < 0) {
    first_step_ = step;
    after_first_step_ = std::chrono::steady_clock::now();
  }
  if (verbose_ != 1 || !interactive_ || target_ <= 0 || step >= target_) return;
  const double per_step = seconds_per_step(step);
  std::string line = bar(step, target_) + " " + styled(format_eta(per_step * double(target_ - step)), "1") +
                     format_step_time(per_step) + values(logs);
  // Blank out what a longer previous line left.
  const size_t width = line.size();
  if (previous_width_ > width) line += std::string(previous_width_ - width, ' ');
  previous_width_ = width;
  std::fprintf(out_, "\r%s", line.c_str());
  std::fflush(out_);
}

void ProgressBar::finish(const Logs& logs, int64_t steps) {
  if (verbose_ == 0) return;
  const double seconds = seconds_between(start_, std::chrono::steady_clock::now());
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%.0fs", seconds);
  const std::string per_step = format_step_time(seconds_per_step(steps));
  if (verbose_ == 1) {
    std::string line = bar(steps, std::max<int64_t>(steps, 1)) + " " + styled(elapsed, "1") + per_step + values(logs);
    if (previous_width_ > line.size()) line += std::string(previous_width_ - line.size(), ' ');
    std::fprintf(out_, "%s%s\n", interactive_ ? "\r" : "", line.c_str());
  } else {
    const std::string digits = std::to_string(steps);
    std::fprintf(out_, "%s/%s - %s -%s%s\n", digits.c_str(), digits.c_str(), elapsed, per_step.c_str(),
                 values(logs).c_str());
  }
  std::fflush(out_);
}

}  // namespace tenfold::models
