#pragma once
// The options of one tenfold command: each taken by name, with its value checked; whatever is
// left at the end is an unknown option, named with the command's --help.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tenfold::cli {

class Arguments {
 public:
  /// `command` names the command in errors ("train": "see tenfold train --help").
  Arguments(std::string command, std::vector<std::string> args);

  /// True when --help or -h was given.
  bool wants_help();
  /// The value of `--name VALUE`, if given.
  std::optional<std::string> take(const std::string& name);
  std::string take(const std::string& name, const std::string& fallback);
  int64_t take_integer(const std::string& name, int64_t fallback, int64_t minimum);
  double take_number(const std::string& name, double fallback, double minimum);
  /// A comma-separated list ("a,b,c"), empty when the option is not given.
  std::vector<std::string> take_list(const std::string& name);
  /// A size in bytes: 123, 512K, 1.5G (K, M, G, T are powers of 1024; KiB, GB, ... too).
  std::optional<size_t> take_bytes(const std::string& name);
  /// The positional argument (e.g. a model file), if any. Take the options first.
  std::optional<std::string> take_positional();
  /// The same, required: its absence is an error naming `what` ("MODEL").
  std::string take_required_positional(const std::string& what);
  /// Throws naming the first option nobody took.
  void finish() const;

 private:
  std::string command_;
  std::vector<std::string> args_;
};

}  // namespace tenfold::cli
