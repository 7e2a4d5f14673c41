#include "distribute/strategy.h"

#include <cstdlib>
#include <mutex>

#include "core/error.h"
#include "distribute/mpi_communicator.h"

namespace tenfold::distribute {

namespace {

constexpr double default_collective_timeout_seconds = 120;

thread_local std::vector<std::shared_ptr<Strategy>> scope_stack;

std::mutex live_mutex;
std::weak_ptr<Strategy> live_multi_replica;

std::shared_ptr<Strategy> remember(std::shared_ptr<Strategy> strategy) {
  if (strategy->num_replicas_in_sync() > 1) {
    std::lock_guard<std::mutex> lock(live_mutex);
    live_multi_replica = strategy;
  }
  return strategy;
}

double collective_timeout(double requested) {
  if (requested > 0) return requested;
  if (const char* text = std::getenv("TENFOLD_COLLECTIVE_TIMEOUT")) {
    double seconds = std::atof(text);
    check_argument(seconds > 0, std::string("TENFOLD_COLLECTIVE_TIMEOUT must be a number of "
                                            "seconds > 0, got '") + text + "'");
    return seconds;
  }
  return default_collective_timeout_seconds;
}

}  // namespace

Strategy::Strategy(std::string name, std::vector<Device> devices,
                   std::shared_ptr<Communicator> communicator)
    : name_(std::move(name)),
      devices_(devices),
      communicator_(std::move(communicator)),
      threads_(std::move(devices)) {
  check_argument(!devices_.empty(), name_ + " needs at least one device");
}

Strategy::~Strategy() = default;

std::shared_ptr<Strategy> Strategy::one_device() {
  return std::shared_ptr<Strategy>(
      new Strategy("OneDeviceStrategy", split_cpu(1), std::make_shared<LocalCommunicator>()));
}

std::shared_ptr<Strategy> Strategy::mirrored(std::vector<Device> devices) {
  return remember(std::shared_ptr<Strategy>(
      new Strategy("MirroredStrategy", std::move(devices), std::make_shared<LocalCommunicator>())));
}

std::shared_ptr<Strategy> Strategy::multi_worker(const ClusterResolver& resolver,
                                                 std::vector<Device> devices,
                                                 double collective_timeout_seconds) {
  std::shared_ptr<Communicator> communicator;
  if (resolver.launched_by_mpi()) {
    communicator = mpi_world(collective_timeout(collective_timeout_seconds));
  } else if (resolver.num_workers() > 1) {
    throw Error(ErrorCode::invalid_argument,
                "a multi-worker strategy over " + std::to_string(resolver.num_workers()) +
                    " listed workers needs its processes started by mpirun: run `mpirun --host "
                    "HOST1,HOST2,... tenfold train ...` (each host running one worker)");
  } else {
    communicator = std::make_shared<LocalCommunicator>();
  }
  return remember(std::shared_ptr<Strategy>(
      new Strategy("MultiWorkerMirroredStrategy", std::move(devices), std::move(communicator))));
}

StrategyScope Strategy::scope() { return StrategyScope(shared_from_this()); }

StrategyScope::StrategyScope(std::shared_ptr<Strategy> strategy) : strategy_(std::move(strategy)) {
  scope_stack.push_back(strategy_);
}

StrategyScope::~StrategyScope() { scope_stack.pop_back(); }

std::shared_ptr<Strategy> current_strategy() {
  if (!scope_stack.empty()) return scope_stack.back();
  static std::shared_ptr<Strategy> default_strategy = Strategy::one_device();
  return default_strategy;
}

std::shared_ptr<Strategy> live_multi_replica_strategy() {
  std::lock_guard<std::mutex> lock(live_mutex);
  return live_multi_replica.lock();
}

}  // namespace tenfold::distribute
