#pragma once
// Commands for tests: one run to its end, or one run in the background for tests that start,
// kill and wait for processes (mpirun jobs, a training run killed mid-way).
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tenfold::testing {

/// A command started in its own process group, its output going to a log file. Destroying it
/// kills the whole group: a test never leaves a job behind, whatever it found.
class Process {
 public:
  Process(const std::vector<std::string>& command, std::filesystem::path log);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  /// The exit code (128 + signal when killed), or -1 when still running after `seconds`.
  int wait(double seconds);
  /// Everything it printed so far.
  std::string output() const;

 private:
  pid_t pid_ = -1;
  std::filesystem::path log_;
};

/// What a shell command printed (stdout and stderr) and its exit code.
struct CommandResult {
  int exit_code;
  std::string output;
};
/// Runs `command` with /bin/sh and waits for it.
CommandResult run_command(const std::string& command);

/// True while `pid` runs (a zombie counts as ended).
bool alive(pid_t pid);

}  // namespace tenfold::testing
