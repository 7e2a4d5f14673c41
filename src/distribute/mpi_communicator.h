#pragma once
// The processes started by mpirun (or srun) as one job, over OpenMPI: shared memory between
// processes of one host, TCP between hosts.
//
// Plain MPI collectives wait forever for a worker that stopped (SIGSTOP, a hung host). Here
// every collective is watched: each worker first tells every other one that it has arrived at
// collective number k, then runs the blocking MPI_Allreduce while a watchdog thread keeps time
// (MPI_THREAD_MULTIPLE); a collective not done within the timeout ends
// the whole job (MPI_Abort) with a message naming the workers that never arrived and do not
// answer a ping (a worker merely blocked behind the stalled one still answers).
#include <memory>

#include "distribute/communicator.h"

namespace tenfold::distribute {

/// The job's communicator: MPI is initialised on first use and finalised at exit.
std::shared_ptr<Communicator> mpi_world(double collective_timeout_seconds);

/// True when this process was started by mpirun or srun (their environment variables).
bool launched_by_mpi();

}  // namespace tenfold::distribute
