#pragma once
// The recipe's first steps for every command: resolve the cluster, connect, and make the
// strategy: multi-worker under mpirun, mirrored over the local devices otherwise.
#include <memory>

#include "cli/arguments.h"
#include "distribute/strategy.h"

namespace tenfold::cli {

/// Takes --devices N, --workers LIST and --connect-timeout S from `arguments`.
std::shared_ptr<distribute::Strategy> resolve_and_connect(Arguments& arguments);

/// Help text of those options.
extern const char* const cluster_options_help;

}  // namespace tenfold::cli
