// The machine's float32 ceiling, measured as the issues define it: a 2048^3 oneDNN matmul,
// best of 10 runs after warm-up, on OMP_NUM_THREADS threads. Prints one JSON line; the zoo
// benchmark (bench/zoo.py) reports each model's GFLOP/s as a share of it.
//   tenfold-bench-peak [--size 2048]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/onednn/engine.h"

using namespace tenfold::kernels::onednn;

int main(int argc, char** argv) {
  int64_t n = 2048;
  if (argc == 3 && std::string(argv[1]) == "--size") n = std::atoll(argv[2]);
  memory::desc a = f32_desc({n, n}, memory::format_tag::ab);
  dnnl::matmul::primitive_desc pd({a, a, a}, engine());
  BoundPrimitive matmul(dnnl::matmul(pd), pd,
                        {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, a}, {DNNL_ARG_DST, a}});
  auto src = tenfold::allocate_aligned(a.get_size());
  auto weights = tenfold::allocate_aligned(a.get_size());
  auto dst = tenfold::allocate_aligned(a.get_size());
  std::fill_n(reinterpret_cast<float*>(src.get()), n * n, 1.0f);
  std::fill_n(reinterpret_cast<float*>(weights.get()), n * n, 0.5f);
  double best = 1e30;
  for (int run = 0; run < 12; ++run) {
    auto start = std::chrono::steady_clock::now();
    matmul.execute({src.get(), weights.get(), dst.get()}, nullptr);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run >= 2) best = std::min(best, seconds);
  }
  std::printf("{\"gflops\": %.1f, \"size\": %ld, \"implementation\": \"%s\"}\n",
              2.0 * double(n) * double(n) * double(n) / best / 1e9, long(n),
              matmul.implementation().c_str());
  return 0;
}
