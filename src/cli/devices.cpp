// tenfold devices: the workers and devices the recipe would train on ("Number of replicas").
#include <cstdio>
#include <string>

#include "cli/cluster.h"
#include "cli/commands.h"

namespace tenfold::cli {

namespace {
const char* const devices_help = R"(usage: tenfold devices [options]

Lists the workers and the logical devices of each, and the number of replicas training
would use.

options:
)";
}  // namespace

int devices(const std::vector<std::string>& args) {
  Arguments arguments("devices", args);
  if (arguments.wants_help()) {
    std::printf("%s%s", devices_help, cluster_options_help);
    return 0;
  }
  auto strategy = resolve_and_connect(arguments);
  arguments.finish();
  if (!strategy->is_chief()) return 0;
  const auto& hosts = strategy->communicator().hosts();
  std::printf("Workers: %d\n", strategy->num_workers());
  for (size_t rank = 0; rank < hosts.size(); ++rank) {
    std::printf("  worker %zu on host %s\n", rank, hosts[rank].c_str());
  }
  std::printf("Devices per worker: %d\n", strategy->num_local_replicas());
  for (const distribute::Device& device : strategy->devices()) {
    std::string cores;
    for (int core : device.cores) {
      if (!cores.empty()) cores += ",";
      cores += std::to_string(core);
    }
    std::printf("  %s (cores %s)\n", device.name().c_str(), cores.c_str());
  }
  std::printf("Number of replicas: %d\n", strategy->num_replicas_in_sync());
  return 0;
}

}  // namespace tenfold::cli
