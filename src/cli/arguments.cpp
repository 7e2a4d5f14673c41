#include "cli/arguments.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

#include "core/error.h"

namespace tenfold::cli {

Arguments::Arguments(std::string command, std::vector<std::string> args)
    : command_(std::move(command)), args_(std::move(args)) {}

bool Arguments::wants_help() {
  return std::find_if(args_.begin(), args_.end(), [](const std::string& arg) {
           return arg == "--help" || arg == "-h";
         }) != args_.end();
}

std::optional<std::string> Arguments::take(const std::string& name) {
  auto found = std::find(args_.begin(), args_.end(), name);
  if (found == args_.end()) return std::nullopt;
  if (found + 1 == args_.end()) {
    throw Error(ErrorCode::invalid_argument,
                name + " needs a value; see tenfold " + command_ + " --help");
  }
  std::string value = *(found + 1);
  args_.erase(found, found + 2);
  return value;
}

std::string Arguments::take(const std::string& name, const std::string& fallback) {
  return take(name).value_or(fallback);
}

int64_t Arguments::take_integer(const std::string& name, int64_t fallback, int64_t minimum) {
  std::optional<std::string> text = take(name);
  if (!text) return fallback;
  try {
    size_t used = 0;
    long long value = std::stoll(*text, &used);
    if (used == text->size() && value >= minimum) return value;
  } catch (const std::exception&) {
  }
  throw Error(ErrorCode::invalid_argument, name + " expects an integer >= " +
                                               std::to_string(minimum) + ", got '" + *text + "'");
}

double Arguments::take_number(const std::string& name, double fallback, double minimum) {
  std::optional<std::string> text = take(name);
  if (!text) return fallback;
  try {
    size_t used = 0;
    double value = std::stod(*text, &used);
    if (used == text->size() && value >= minimum) return value;
  } catch (const std::exception&) {
  }
  throw Error(ErrorCode::invalid_argument, name + " expects a number >= " +
                                               std::to_string(minimum) + ", got '" + *text + "'");
}

std::vector<std::string> Arguments::take_list(const std::string& name) {
  std::vector<std::string> items;
  std::stringstream text(take(name, ""));
  for (std::string item; std::getline(text, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::optional<size_t> Arguments::take_bytes(const std::string& name) {
  std::optional<std::string> text = take(name);
  if (!text) return std::nullopt;
  try {
    size_t used = 0;
    double value = std::stod(*text, &used);
    std::string unit;
    for (char c : text->substr(used)) unit += char(std::toupper(c));
    if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();  // "GB", "GiB"
    if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
    const std::map<std::string, int> powers = {{"", 0}, {"B", 0}, {"K", 1}, {"M", 2}, {"G", 3}, {"T", 4}};
    auto power = powers.find(unit);
    if (power != powers.end() && value > 0) return size_t(value * std::pow(1024.0, power->second));
  } catch (const std::exception&) {
  }
  throw Error(ErrorCode::invalid_argument,
              name + " expects a size such as 512M or 4G, got '" + *text + "'");
}

std::optional<std::string> Arguments::take_positional() {
  auto found = std::find_if(args_.begin(), args_.end(),
                            [](const std::string& arg) { return arg.rfind("-", 0) != 0; });
  if (found == args_.end()) return std::nullopt;
  std::string value = *found;
  args_.erase(found);
  return value;
}

std::string Arguments::take_required_positional(const std::string& what) {
  if (auto value = take_positional()) return *value;
  throw Error(ErrorCode::invalid_argument,
              "tenfold " + command_ + " needs " + what + "; see tenfold " + command_ + " --help");
}

void Arguments::finish() const {
  if (args_.empty()) return;
  throw Error(ErrorCode::invalid_argument,
              "unknown option '" + args_.front() + "'; see tenfold " + command_ + " --help");
}

}  // namespace tenfold::cli
