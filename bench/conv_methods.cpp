// oneDNN's direct and Winograd convolutions on the same layer (3x3 'same' stride 1, relu, an
// input gradient wanted: a layer inside a network), each as Conv2DKernel runs it, its copies
// to and from the blocked layout counted: best forward and backward of --repeats calls, in ms,
// one JSON line per method. The methods take turns call by call, so a noisy machine slows both
// alike. With --replicas R, R copies run at once on one thread each, as R replicas train
// (sharing the memory bandwidth); the first one's times. Conv2DKernel measures the same at
// compile to pick one; conv2d.cpp's winograd_possible cites these timings.
//   tenfold-bench-conv [--batch 256] [--size 28] [--in 16] [--filters 16] [--replicas 1]
//                      [--repeats 20]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <omp.h>

#include "kernels/onednn/conv2d.h"

using namespace tenfold;
using namespace tenfold::kernels;
using Method = onednn::Conv2DKernel::Method;

namespace {

const Method methods[] = {Method::direct, Method::winograd};

struct Times {
  double forward = 1e30, backward = 1e30;
};

/// One layer with each method, run in turns: the best of `repeats` forward and backward (data
/// and weights) times of each, in ms.
std::vector<Times> best_times(const WindowGeometry& g, int repeats) {
  const auto stored = onednn::Conv2DKernel::preferred_weights_desc(g);
  std::vector<std::unique_ptr<onednn::Conv2DKernel>> kernels;
  size_t scratch_bytes = 1;
  for (Method method : methods) {
    kernels.push_back(std::make_unique<onednn::Conv2DKernel>(
        g, Activation::relu, true, stored, true, DType::float32, false,
        onednn::Conv2DKernel::WeightGradients::float32, method));
    scratch_bytes = std::max(scratch_bytes, kernels.back()->scratch_bytes());
  }
  auto scratch = allocate_aligned(scratch_bytes);
  for (auto& kernel : kernels) kernel->bind_scratch(scratch.get());
  const size_t in = size_t(g.batch * g.in_height * g.in_width * g.in_channels) * sizeof(float);
  const size_t out = size_t(g.batch * g.out_height * g.out_width * g.out_channels) * sizeof(float);
  // Zero-filled data: the kernels' speed does not depend on the values.
  auto src = allocate_aligned(in), diff_src = allocate_aligned(in);
  auto dst = allocate_aligned(out), diff_dst = allocate_aligned(out);
  const size_t weights = stored.get_size() / sizeof(float);
  std::vector<float> kernel_values(weights), bias(size_t(g.out_channels)), diff_kernel(weights),
      diff_bias(size_t(g.out_channels));
  std::vector<Times> best(kernels.size());
  using clock = std::chrono::steady_clock;
  for (int r = 0; r < repeats; ++r) {
    for (size_t k = 0; k < kernels.size(); ++k) {
      const auto start = clock::now();
      kernels[k]->forward(src.get(), kernel_values.data(), bias.data(), dst.get());
      const auto middle = clock::now();
      kernels[k]->backward(src.get(), dst.get(), diff_dst.get(), kernel_values.data(), diff_src.get(),
                           diff_kernel.data(), diff_bias.data());
      const auto end = clock::now();
      best[k].forward = std::min(best[k].forward, std::chrono::duration<double, std::milli>(middle - start).count());
      best[k].backward = std::min(best[k].backward, std::chrono::duration<double, std::milli>(end - middle).count());
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t batch = 256, size = 28, in_channels = 16, filters = 16;
  int repeats = 20, replicas = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    const int64_t value = std::atoll(argv[i + 1]);
    if (option == "--batch") batch = value;
    if (option == "--size") size = value;
    if (option == "--in") in_channels = value;
    if (option == "--filters") filters = value;
    if (option == "--repeats") repeats = int(value);
    if (option == "--replicas") replicas = int(value);
  }
  const WindowGeometry g =
      make_window_geometry(batch, size, size, in_channels, filters, 3, 3, 1, 1, Padding::same, 1, 1, 1);
  std::vector<std::vector<Times>> times(static_cast<size_t>(replicas));
  std::vector<std::thread> threads;
  for (int r = 0; r < replicas; ++r) {
    threads.emplace_back([&, r] {
      omp_set_num_threads(1);  // oneDNN runs on this thread alone, as in a replica of one core
      times[size_t(r)] = best_times(g, repeats);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t k = 0; k < std::size(methods); ++k) {
    const Times& t = times[0][k];
    std::printf("{\"method\": \"%s\", \"layer\": \"%lldx%lld %lld->%lld\", \"replicas\": %d, \"forward_ms\": %.3f, "
                "\"backward_ms\": %.3f, \"total_ms\": %.3f}\n",
                methods[k] == Method::winograd ? "winograd" : "direct", (long long)size, (long long)size,
                (long long)in_channels, (long long)filters, replicas, t.forward, t.backward, t.forward + t.backward);
  }
  return 0;
}
