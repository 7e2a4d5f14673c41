#include "distribute/communicator.h"

#include <unistd.h>

namespace tenfold::distribute {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

LocalCommunicator::LocalCommunicator() : hosts_{host_name()} {}

}  // namespace tenfold::distribute
