#include "kernels/timing.h"

#include <map>
#include <mutex>
#include <utility>

namespace tenfold::kernels {

bool decided_once(const std::string& question, const std::vector<int64_t>& shape, const std::function<bool()>& decide) {
  static std::recursive_mutex mutex;
  static std::map<std::pair<std::string, std::vector<int64_t>>, bool> decided;
  const auto key = std::make_pair(question, shape);
  std::lock_guard lock(mutex);
  auto found = decided.find(key);
  if (found != decided.end()) return found->second;
  return decided[key] = decide();
}

}  // namespace tenfold::kernels
