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
  /// The message without the code's name (what() has both): for an error that adds context
  /// to another, Error(error.code(), context + error.message()).
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

/// Throws Error(invalid_argument, message) unless `condition` holds.
void check_argument(bool condition, const std::string& message);

}  // namespace tenfold
