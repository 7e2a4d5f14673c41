#pragma once
// The command line under test (tests/cli/, which define TENFOLD_BINARY): running build/tenfold
// and reading numbers from what it printed.
#include <gtest/gtest.h>

#include <string>

#include "support/process.h"

namespace tenfold::testing {

/// Runs the tenfold binary (TENFOLD_BINARY, set by tests/CMakeLists.txt) with `arguments`.
inline CommandResult tenfold(const std::string& arguments) {
  return run_command(std::string(TENFOLD_BINARY) + " " + arguments);
}

/// The first number after `label` in `text`; a test failure, and -1, when `label` is not there.
inline double number_after(const std::string& text, const std::string& label) {
  const size_t at = text.find(label);
  EXPECT_NE(at, std::string::npos) << "no '" << label << "' in:\n" << text;
  return at == std::string::npos ? -1 : std::stod(text.substr(at + label.size()));
}

}  // namespace tenfold::testing
