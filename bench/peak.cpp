// The machine's ceiling, measured as the issues define it: a 2048^3 oneDNN matmul, best of 10
// runs after warm-up, on OMP_NUM_THREADS threads; in float32, or with --dtype bfloat16 in
// bfloat16 (float32 output), the mixed_bfloat16 policy's ceiling. Prints one JSON line; the zoo
// benchmark (bench/zoo.py) reports each model's GFLOP/s as a share of it.
//   tenfold-bench-peak [--size 2048] [--dtype float32|bfloat16]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/onednn/engine.h"

using namespace tenfold::kernels::onednn;

int main(int argc, char** argv) {
  int64_t n = 2048;
  std::string dtype = "float32";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--size") n = std::atoll(argv[i + 1]);
    if (std::string(argv[i]) == "--dtype") dtype = argv[i + 1];
  }
  const memory::data_type inputs = dtype == "bfloat16" ? memory::data_type::bf16 : memory::data_type::f32;
  memory::desc a({n, n}, inputs, memory::format_tag::ab);
  memory::desc c = f32_desc({n, n}, memory::format_tag::ab);
  dnnl::matmul::primitive_desc pd({a, a, c}, engine());
  BoundPrimitive matmul(dnnl::matmul(pd), pd,
                        {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, a}, {DNNL_ARG_DST, c}});
  // Zero-filled inputs: the kernels' speed does not depend on the values.
  auto src = tenfold::allocate_aligned(a.get_size());
  auto weights = tenfold::allocate_aligned(a.get_size());
  auto dst = tenfold::allocate_aligned(c.get_size());
  double best = 1e30;
  for (int run = 0; run < 12; ++run) {
    auto start = std::chrono::steady_clock::now();
    matmul.execute({src.get(), weights.get(), dst.get()}, nullptr);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run >= 2) best = std::min(best, seconds);
  }
  std::printf("{\"gflops\": %.1f, \"size\": %ld, \"dtype\": \"%s\", \"implementation\": \"%s\"}\n",
              2.0 * double(n) * double(n) * double(n) / best / 1e9, long(n), dtype.c_str(),
              matmul.implementation().c_str());
  return 0;
}
