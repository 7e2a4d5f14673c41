#include "support/process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace tenfold::testing {

CommandResult run_command(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  char buffer[4096];
  while (size_t got = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, got);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output};
}

Process::Process(const std::vector<std::string>& command, std::filesystem::path log) : log_(std::move(log)) {
  pid_ = fork();
  if (pid_ == 0) {
    setpgid(0, 0);
    FILE* out = std::fopen(log_.c_str(), "w");
    dup2(fileno(out), 1);
    dup2(fileno(out), 2);
    std::vector<char*> argv;
    for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::perror("execvp");
    _exit(127);
  }
}

Process::~Process() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

int Process::wait(double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

std::string Process::output() const {
  std::ifstream file(log_);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool alive(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(status, text);
  return !text.empty() && text.find(") Z ") == std::string::npos;
}

}  // namespace tenfold::testing
