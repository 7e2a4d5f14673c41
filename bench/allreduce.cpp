// Tenfold's all-reduce (non-blocking, with arrival notices for the watchdog) against a plain
// blocking MPI_Allreduce of the same buffer: the price of never hanging. Run under mpirun:
//   mpirun -np 2 tenfold-bench-allreduce [--elements 693962] [--iterations 50]
// Worker 0 prints one JSON line: milliseconds per all-reduce and bandwidth (bytes / time).
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "distribute/mpi_communicator.h"

using namespace tenfold;

template <typename Reduce>
double best_seconds(Reduce reduce, int iterations) {
  for (int i = 0; i < 5; ++i) reduce();  // warm-up: connections, buffers
  double best = 1e30;
  for (int round = 0; round < 3; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) reduce();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations);
  }
  return best;
}

int main(int argc, char** argv) {
  int64_t elements = 693962;  // the recipe model's gradients
  int iterations = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string option = argv[i];
    if (option == "--elements") elements = std::atoll(argv[i + 1]);
    if (option == "--iterations") iterations = std::atoi(argv[i + 1]);
  }
  auto communicator = distribute::mpi_world(120);
  std::vector<float> values(size_t(elements), 1.0f);
  double ours = best_seconds([&] { communicator->allreduce_sum(values.data(), elements); }, iterations);
  double plain = best_seconds(
      [&] { MPI_Allreduce(MPI_IN_PLACE, values.data(), int(elements), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); },
      iterations);
  if (communicator->rank() == 0) {
    double bytes = double(elements) * sizeof(float);
    std::printf("{\"workers\": %d, \"elements\": %lld, \"tenfold_ms\": %.3f, \"mpi_ms\": %.3f, "
                "\"tenfold_gb_per_s\": %.2f, \"mpi_gb_per_s\": %.2f}\n",
                communicator->size(), static_cast<long long>(elements), ours * 1e3, plain * 1e3,
                bytes / ours / 1e9, bytes / plain / 1e9);
  }
  return 0;
}
