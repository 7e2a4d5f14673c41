#pragma once
// tf.distribute strategies: how a model's training step is spread over devices and workers.
//
//   auto strategy = distribute::Strategy::mirrored();        // every local device
//   {
//     auto scope = strategy->scope();                         // `with strategy.scope():`
//     model = models::seed_cnn();
//     model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
//   }
//   model->fit(dataset.batch(per_replica_batch * strategy->num_replicas_in_sync()), options);
//
// Each step the global batch is split across all replicas (of all workers); each replica runs
// forward and backward on its rows with the loss scaled by 1 / global batch; gradients are
// summed over local replicas, then across workers (MPI_Allreduce on one fused buffer), and one
// optimizer update is applied. The variables live once per process and every replica reads
// them: on one host's cores that is what mirroring amounts to, with nothing to copy.
#include <memory>
#include <string>
#include <vector>

#include "distribute/cluster_resolver.h"
#include "distribute/communicator.h"
#include "distribute/device.h"
#include "distribute/device_threads.h"

namespace tenfold::distribute {

class StrategyScope;

class Strategy : public std::enable_shared_from_this<Strategy> {
 public:
  /// One replica on one device (the default outside any scope).
  static std::shared_ptr<Strategy> one_device();
  /// One replica per device, in this process.
  static std::shared_ptr<Strategy> mirrored(std::vector<Device> devices = list_logical_devices());
  /// One replica per local device in every worker of the cluster (mpirun's processes).
  /// A collective that does not finish within `collective_timeout_seconds` (default: the
  /// environment's TENFOLD_COLLECTIVE_TIMEOUT, else 120) ends the job naming the stalled worker.
  static std::shared_ptr<Strategy> multi_worker(const ClusterResolver& resolver,
                                                std::vector<Device> devices = list_logical_devices(),
                                                double collective_timeout_seconds = 0);

  ~Strategy();

  /// "OneDeviceStrategy", "MirroredStrategy" or "MultiWorkerMirroredStrategy".
  const std::string& name() const { return name_; }
  int num_replicas_in_sync() const { return num_local_replicas() * communicator_->size(); }
  int num_local_replicas() const { return threads_.size(); }
  int num_workers() const { return communicator_->size(); }
  /// Worker 0 alone prints progress and writes files.
  bool is_chief() const { return communicator_->rank() == 0; }
  const std::vector<Device>& devices() const { return devices_; }
  Communicator& communicator() { return *communicator_; }
  /// Runs task(replica) for every local replica on its device, side by side.
  void run_on_replicas(const std::function<void(int replica)>& task) { threads_.run(task); }

  /// While the returned object lives, models compiled on this thread use this strategy.
  StrategyScope scope();

 private:
  Strategy(std::string name, std::vector<Device> devices, std::shared_ptr<Communicator> communicator);

  std::string name_;
  std::vector<Device> devices_;
  std::shared_ptr<Communicator> communicator_;
  DeviceThreads threads_;
};

class StrategyScope {
 public:
  explicit StrategyScope(std::shared_ptr<Strategy> strategy);
  ~StrategyScope();
  StrategyScope(const StrategyScope&) = delete;
  StrategyScope& operator=(const StrategyScope&) = delete;

 private:
  std::shared_ptr<Strategy> strategy_;
};

/// The strategy of the innermost scope on this thread, else the default one-device strategy.
std::shared_ptr<Strategy> current_strategy();
/// The most recently created strategy with more than one replica that still exists, or null:
/// a model compiled outside its scope is told about it at fit.
std::shared_ptr<Strategy> live_multi_replica_strategy();

}  // namespace tenfold::distribute
