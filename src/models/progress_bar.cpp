#include "models/progress_bar.h"

#include <unistd.h>

#include <cmath>

namespace tenfold::models {

namespace {

constexpr int bar_width = 30;

std::string format_duration(double seconds) {
  char text[32];
  if (seconds >= 1) {
    std::snprintf(text, sizeof text, "%.0fs", seconds);
  } else if (seconds >= 1e-3) {
    std::snprintf(text, sizeof text, "%.0fms", seconds * 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.0fus", seconds * 1e6);
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

double ProgressBar::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string ProgressBar::values(const Logs& logs) const {
  std::string text;
  for (const auto& [name, value] : logs) text += " - " + name + ": " + format_log_value(value);
  return text;
}

void ProgressBar::update(int64_t step, const Logs& logs) {
  if (verbose_ != 1 || !interactive_ || target_ <= 0 || step >= target_) return;
  std::string digits = std::to_string(target_);
  int filled = int(bar_width * step / target_);
  std::string bar(size_t(filled > 0 ? filled - 1 : 0), '=');
  if (filled > 0) bar += '>';
  bar += std::string(size_t(bar_width - int(bar.size())), '.');
  double eta = elapsed_seconds() / double(step) * double(target_ - step);
  std::fprintf(out_, "\r%*lld/%s [%s] - ETA: %s%s", int(digits.size()), (long long)step,
               digits.c_str(), bar.c_str(), format_duration(eta).c_str(), values(logs).c_str());
  std::fflush(out_);
}

void ProgressBar::finish(const Logs& logs, int64_t steps) {
  if (verbose_ == 0) return;
  double seconds = elapsed_seconds();
  std::string per_step = format_duration(seconds / double(steps > 0 ? steps : 1)) + "/step";
  std::string digits = std::to_string(steps);
  if (verbose_ == 1) {
    std::fprintf(out_, "%s%s/%s [%s] - %s %s%s\n", interactive_ ? "\r" : "", digits.c_str(),
                 digits.c_str(), std::string(bar_width, '=').c_str(),
                 format_duration(seconds).c_str(), per_step.c_str(), values(logs).c_str());
  } else {
    std::fprintf(out_, "%s/%s - %s%s - %s/epoch - %s\n", digits.c_str(), digits.c_str(),
                 format_duration(seconds).c_str(), values(logs).c_str(),
                 format_duration(seconds).c_str(), per_step.c_str());
  }
  std::fflush(out_);
}

}  // namespace tenfold::models
