#include "core/error.h"

namespace tenfold {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid argument";
    case ErrorCode::not_found: return "not found";
    case ErrorCode::data_loss: return "data loss";
    case ErrorCode::resource_exhausted: return "resource exhausted";
    case ErrorCode::unavailable: return "unavailable";
    case ErrorCode::deadline_exceeded: return "deadline exceeded";
    case ErrorCode::internal: return "internal";
  }
  return "unknown";
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(std::string(error_code_name(code)) + ": " + message), code_(code), message_(message) {}

void check_argument(bool condition, const std::string& message) {
  if (!condition) throw Error(ErrorCode::invalid_argument, message);
}

}  // namespace tenfold
