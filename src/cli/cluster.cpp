#include "cli/cluster.h"

#include "core/error.h"
#include "distribute/cluster_resolver.h"

namespace tenfold::cli {

const char* const cluster_options_help = R"(  --devices N               logical devices (replicas) per worker: the cores split into N
                            groups (default: one per core)
  --workers LIST            worker addresses host:port,host:port (grpc:// accepted): each
                            must answer within the connect timeout; the processes themselves
                            are started with mpirun --host (see README)
  --connect-timeout S       seconds to wait for every worker (default 30)
Under mpirun the command runs across all processes; rank 0 alone prints and writes files.
)";

std::shared_ptr<distribute::Strategy> resolve_and_connect(Arguments& arguments) {
  int64_t devices = arguments.take_integer("--devices", 0, 1);
  std::optional<std::string> workers = arguments.take("--workers");
  double timeout = arguments.take_number("--connect-timeout", 30, 0.001);
  if (devices > 0) distribute::configure_logical_devices(int(devices));

  distribute::ClusterResolver resolver = distribute::ClusterResolver::from_environment();
  if (workers) {
    distribute::ClusterResolver::from_workers(*workers).connect(timeout);
    if (!resolver.launched_by_mpi()) {
      throw Error(ErrorCode::invalid_argument,
                  "the workers " + *workers + " answer, but their processes must be started "
                  "together: run `mpirun --host HOST1,HOST2 tenfold ...` with those hosts");
    }
  }
  if (resolver.launched_by_mpi()) return distribute::Strategy::multi_worker(resolver);
  return distribute::Strategy::mirrored();
}

}  // namespace tenfold::cli
