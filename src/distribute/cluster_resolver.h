#pragma once
// Where the workers of a job are (TPUClusterResolver's role): this process alone; the processes
// mpirun or srun started (from their environment); or an explicit list of worker addresses,
// "host:port,host:port" ("grpc://" prefixes accepted, as in the recipe).
#include <string>
#include <vector>

namespace tenfold::distribute {

struct WorkerAddress {
  std::string host;
  int port = 0;
  std::string to_string() const { return host + ":" + std::to_string(port); }
};

class ClusterResolver {
 public:
  /// This process is the whole cluster: its local devices only.
  static ClusterResolver local();
  /// mpirun's (OMPI_COMM_WORLD_RANK/SIZE) or Slurm's (SLURM_PROCID, SLURM_NTASKS,
  /// SLURM_JOB_NODELIST) environment; local() when neither started this process.
  static ClusterResolver from_environment();
  /// "grpc://a:8470,grpc://b:8470" or "a:8470,b:8470". This process is worker `task_index`.
  static ClusterResolver from_workers(const std::string& addresses, int task_index = 0);

  int num_workers() const { return num_workers_; }
  int task_index() const { return task_index_; }
  /// Known addresses or hosts of the workers (empty for mpirun, which knows them itself).
  const std::vector<WorkerAddress>& workers() const { return workers_; }
  /// True when the workers are processes started by mpirun or srun.
  bool launched_by_mpi() const { return launched_by_mpi_; }

  /// Checks that every listed worker accepts a TCP connection within `timeout_seconds`;
  /// throws (unavailable / deadline exceeded) naming the first address that does not, and
  /// what to check. Returns at once when no addresses are listed.
  void connect(double timeout_seconds) const;

 private:
  int num_workers_ = 1;
  int task_index_ = 0;
  bool launched_by_mpi_ = false;
  std::vector<WorkerAddress> workers_;
};

/// Slurm's compressed host lists: "a,b", "node[01-03,07]", "gpu[1-2],cpu5" -> each host.
std::vector<std::string> expand_slurm_nodelist(const std::string& nodelist);

}  // namespace tenfold::distribute
