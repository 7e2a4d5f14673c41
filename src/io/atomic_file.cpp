#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace tenfold::io {

namespace {

/// For the crash-safety tests only: TENFOLD_TEST_CRASH_AT=written|synced|renamed ends the
/// process (as a power cut would) at that point of a save.
void crash_point(const char* point) {
  const char* wanted = std::getenv("TENFOLD_TEST_CRASH_AT");
  if (wanted && std::strcmp(wanted, point) == 0) _exit(86);
}

void sync_path(const std::string& path, bool directory) {
  int fd = open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0 || fsync(fd) != 0) {
    int error = errno;
    if (fd >= 0) close(fd);
    throw Error(ErrorCode::unavailable, "cannot flush " + path + " to disk: " + std::strerror(error));
  }
  close(fd);
}

}  // namespace

void replace_file_atomically(const std::string& path,
                             const std::function<void(const std::string&)>& write) {
  std::filesystem::path target = std::filesystem::absolute(path);
  std::string temporary = target.string() + ".tmp-" + std::to_string(getpid());
  try {
    write(temporary);
    crash_point("written");
    sync_path(temporary, false);
    crash_point("synced");
    if (std::rename(temporary.c_str(), target.c_str()) != 0) {
      throw Error(ErrorCode::unavailable,
                  "cannot rename " + temporary + " to " + target.string() + ": " + std::strerror(errno));
    }
  } catch (...) {
    std::filesystem::remove(temporary);
    throw;
  }
  crash_point("renamed");
  sync_path(target.parent_path().string(), true);
}

}  // namespace tenfold::io
