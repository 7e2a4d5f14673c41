// oneDNN's direct convolution and a Winograd one (oneDNN's, or Tenfold's F(2x2, 3x3) where
// oneDNN has none: CPUs without AVX-512) on the same layer (3x3 'same' stride 1, relu, an input
// gradient wanted: a layer inside a network), each as Conv2DKernel runs it, oneDNN Winograd's
// copies to and from the blocked layout counted: best forward and backward of --repeats calls, in ms,
// one JSON line per method. The methods take turns call by call, so a noisy machine slows both
// alike. With --replicas R, R copies run at once on one thread each, as R replicas train
// (sharing the memory bandwidth); the first one's times. Conv2DKernel measures the same at
// compile to pick one (Conv2DKernel::time_methods, 3 rounds); conv2d.cpp's winograd_method
// cites these timings.
//   tenfold-bench-conv [--batch 256] [--size 28] [--in 16] [--filters 16] [--replicas 1]
//                      [--repeats 20]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <omp.h>

#include "kernels/onednn/conv2d.h"

using namespace tenfold;
using namespace tenfold::kernels;

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
  const auto stored = onednn::Conv2DKernel::preferred_weights_desc(g);
  std::vector<std::vector<onednn::Conv2DKernel::MethodSeconds>> seconds(static_cast<size_t>(replicas));
  std::vector<std::thread> threads;
  for (int r = 0; r < replicas; ++r) {
    threads.emplace_back([&, r] {
      omp_set_num_threads(1);  // oneDNN runs on this thread alone, as in a replica of one core
      seconds[size_t(r)] = onednn::Conv2DKernel::time_methods(g, Activation::relu, true, stored, true,
                                                               onednn::Conv2DKernel::WeightGradients::float32, repeats);
    });
  }
  for (std::thread& thread : threads) thread.join();
  if (seconds[0].empty()) {
    std::fprintf(stderr, "no Winograd kernel computes this convolution (3x3, stride 1; Tenfold's: channels in whole vectors)\n");
    return 1;
  }
  const char* names[] = {"direct", "winograd"};
  for (size_t k = 0; k < 2; ++k) {
    const onednn::Conv2DKernel::MethodSeconds& t = seconds[0][k];
    std::printf("{\"method\": \"%s\", \"layer\": \"%lldx%lld %lld->%lld\", \"replicas\": %d, \"forward_ms\": %.3f, "
                "\"backward_ms\": %.3f, \"total_ms\": %.3f}\n",
                names[k], (long long)size, (long long)size, (long long)in_channels, (long long)filters, replicas,
                1e3 * t.forward, 1e3 * t.backward, 1e3 * t.total());
  }
  return 0;
}
