#pragma once
// One error type for the whole library: a category, and a message that names the offending value,
// what was expected, and what to do about it.
#include <stdexcept>
#include <string>

namespace tenfold {

enum class ErrorCode {
  invalid_argument,
  not_found,
  data_loss,
  resource_exhausted,
  unavailable,
  deadline_exceeded,
  internal,
};

const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

/// Throws Error(invalid_argument, message) unless `condition` holds.
void check_argument(bool condition, const std::string& message);

}  // namespace tenfold
