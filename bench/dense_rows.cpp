// Dense's products (kernels/onednn/dense.h) with the rows as stored and with every operand's
// rows padded by a cache line, on the same layer: the best of --repeats calls of forward and
// backward (backward-data, when --first 0, and backward-weights), in ms, one JSON line per
// layout; the layouts take turns call by call. DenseKernel times the aliasing operands padded
// against plain at compile to pick.
//   tenfold-bench-dense [--rows 256] [--in 784] [--units 512] [--first 1] [--repeats 20]
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kernels/onednn/dense.h"
#include "kernels/timing.h"

using namespace tenfold;
using namespace tenfold::kernels;
using onednn::DenseKernel;

int main(int argc, char** argv) {
  int64_t rows = 256, in = 784, units = 512, first = 1, repeats = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    const int64_t value = std::atoll(argv[i + 1]);
    if (option == "--rows") rows = value;
    if (option == "--in") in = value;
    if (option == "--units") units = value;
    if (option == "--first") first = value;
    if (option == "--repeats") repeats = value;
  }
  const DenseKernel::RowPadding paddings[] = {DenseKernel::RowPadding::none, DenseKernel::RowPadding::padded};
  std::vector<DenseKernel> kernels;
  for (auto padding : paddings) {
    kernels.emplace_back(rows, in, units, Activation::relu, true, first == 0, DType::float32, padding);
  }
  // Zeros (the speed does not depend on values), allocated as Tenfold's tensors are (the speed
  // depends on addresses).
  auto floats = [](int64_t count) { return allocate_aligned(size_t(count) * sizeof(float)); };
  auto src = floats(rows * in), diff_src = floats(rows * in), dst = floats(rows * units), diff_dst = floats(rows * units);
  auto kernel_bytes = floats(in * units), diff_kernel_bytes = floats(in * units), bias_bytes = floats(units),
       diff_bias_bytes = floats(units);
  auto* kernel = reinterpret_cast<float*>(kernel_bytes.get());
  auto* diff_kernel = reinterpret_cast<float*>(diff_kernel_bytes.get());
  auto* bias = reinterpret_cast<float*>(bias_bytes.get());
  auto* diff_bias = reinterpret_cast<float*>(diff_bias_bytes.get());
  std::vector<std::function<void()>> runs;
  for (auto& dense : kernels) {
    runs.push_back([&] { dense.forward(src.get(), kernel, bias, dst.get()); });
    runs.push_back([&] {
      dense.backward(src.get(), dst.get(), diff_dst.get(), kernel, first ? nullptr : diff_src.get(),
                     diff_kernel, diff_bias);
    });
  }
  const std::vector<double> seconds = best_seconds_in_turns(runs, int(repeats));
  for (size_t k = 0; k < kernels.size(); ++k) {
    std::printf("{\"rows\": \"%s\", \"shape\": \"%lldx%lld x %lldx%lld\", \"forward_ms\": %.3f, \"backward_ms\": %.3f}\n",
                k == 0 ? "as stored" : "padded", (long long)rows, (long long)in, (long long)in, (long long)units,
                1e3 * seconds[2 * k], 1e3 * seconds[2 * k + 1]);
  }
  return 0;
}
