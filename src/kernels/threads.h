#pragma once
// The calling OpenMP thread's number and the team size a parallel region gets, for kernels that
// keep per-thread sums and add them in thread order (a run's result must not depend on timing).
#ifdef _OPENMP
#include <omp.h>
#endif

namespace tenfold::kernels {

inline int thread_number() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

inline int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace tenfold::kernels
