#pragma once
// Collectives across the worker processes of a job. One process alone has a communicator of
// size 1 whose collectives do nothing; MpiCommunicator (mpi_communicator.h) spans the processes
// mpirun started. Every collective must be called by every worker, in the same order.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tenfold::distribute {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Host name of each rank.
  virtual const std::vector<std::string>& hosts() const = 0;
  /// Sums `count` values across all workers, in place; every worker gets the same result.
  virtual void allreduce_sum(float* values, int64_t count) = 0;
  virtual void allreduce_sum(double* values, int64_t count) = 0;
};

/// A job of one process.
class LocalCommunicator : public Communicator {
 public:
  LocalCommunicator();
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const std::vector<std::string>& hosts() const override { return hosts_; }
  void allreduce_sum(float*, int64_t) override {}
  void allreduce_sum(double*, int64_t) override {}

 private:
  std::vector<std::string> hosts_;
};

/// This machine's host name.
std::string host_name();

}  // namespace tenfold::distribute
