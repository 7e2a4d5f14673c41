// The first-layer kernels (few-channel, and direct where the filters fill whole vectors)
// against oneDNN's convolution on the same layer (LeNet's 1 -> 6 5x5 'same' + tanh on 28x28
// images by default): best forward and backward (weight gradients, the activation's backward
// included) of --repeats calls each, in ms, one JSON line per kernel and dtype, side by side in
// one run.
// With --pool 2, the direct kernel alone, with the 2x2 max pooling after it (the recipe's first
// block: --filters 32 --kernel 3 --padding valid --activation relu --pool 2).
//   tenfold-bench-few-channel [--batch 256] [--filters 6] [--kernel 5] [--stride 1]
//                             [--padding same|valid] [--activation tanh] [--pool 0|2] [--repeats 20]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/direct_conv.h"
#include "kernels/few_channel_conv.h"
#include "kernels/onednn/conv2d.h"
#include "layers/dtype_policy.h"

using namespace tenfold;
using namespace tenfold::kernels;

namespace {

/// The best of `repeats` timings of forward and of backward, in ms.
/// `weights`: the floats of the stored weights' layout (oneDNN's pads the filters).
/// `pool`: the pooled output's geometry, whose argmax the kernel writes and reads.
template <typename Kernel>
std::pair<double, double> best_times(Kernel& kernel, const WindowGeometry& g, DType dtype, size_t weights,
                                     int repeats, const WindowGeometry* pool = nullptr) {
  const size_t element = dtype_size(dtype);
  // Zero-filled data: the kernels' speed does not depend on the values.
  auto src = allocate_aligned(size_t(g.batch * g.in_height * g.in_width * g.in_channels) * element);
  auto dst = allocate_aligned(size_t(g.batch * g.out_height * g.out_width * g.out_channels) * element);
  auto diff_dst = allocate_aligned(size_t(g.batch * g.out_height * g.out_width * g.out_channels) * element);
  auto argmax = allocate_aligned(pool ? size_t(pool->batch * pool->out_height * pool->out_width * pool->out_channels) : 0);
  uint8_t* pooled_argmax = pool ? reinterpret_cast<uint8_t*>(argmax.get()) : nullptr;
  std::vector<float> kernel_values(weights), bias(size_t(g.out_channels)), diff_kernel(weights),
      diff_bias(size_t(g.out_channels));
  double forward = 1e30, backward = 1e30;
  using clock = std::chrono::steady_clock;
  for (int r = 0; r < repeats; ++r) {
    const auto start = clock::now();
    if constexpr (std::is_same_v<Kernel, DirectConv2DKernel>) {
      kernel.forward(src.get(), kernel_values.data(), bias.data(), dst.get(), pooled_argmax);
    } else {
      kernel.forward(src.get(), kernel_values.data(), bias.data(), dst.get());
    }
    const auto middle = clock::now();
    if constexpr (std::is_same_v<Kernel, DirectConv2DKernel>) {
      kernel.backward(src.get(), dst.get(), diff_dst.get(), kernel_values.data(), nullptr, diff_kernel.data(),
                      diff_bias.data(), pooled_argmax);
    } else {
      kernel.backward(src.get(), dst.get(), diff_dst.get(), kernel_values.data(), nullptr, diff_kernel.data(),
                      diff_bias.data());
    }
    const auto end = clock::now();
    forward = std::min(forward, std::chrono::duration<double, std::milli>(middle - start).count());
    backward = std::min(backward, std::chrono::duration<double, std::milli>(end - middle).count());
  }
  return {forward, backward};
}

void report(const char* kernel, DType dtype, std::pair<double, double> times) {
  std::printf("{\"kernel\": \"%s\", \"dtype\": \"%s\", \"forward_ms\": %.3f, \"backward_ms\": %.3f}\n", kernel,
              dtype == DType::bfloat16 ? "bfloat16" : "float32", times.first, times.second);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t batch = 256, filters = 6, window = 5, stride = 1, pool_size = 0;
  std::string activation_name = "tanh", padding_name = "same";
  int repeats = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    const int64_t value = std::atoll(argv[i + 1]);
    if (option == "--batch") batch = value;
    if (option == "--filters") filters = value;
    if (option == "--kernel") window = value;
    if (option == "--stride") stride = value;
    if (option == "--activation") activation_name = argv[i + 1];
    if (option == "--padding") padding_name = argv[i + 1];
    if (option == "--pool") pool_size = value;
    if (option == "--repeats") repeats = int(value);
  }
  const Activation activation = parse_activation(activation_name);
  const WindowGeometry g =
      make_window_geometry(batch, 28, 28, 1, filters, window, window, stride, stride,
                           padding_name == "valid" ? Padding::valid : Padding::same, 1, 1, 1);
  const auto stored = onednn::Conv2DKernel::preferred_weights_desc(g);
  const size_t weights = stored.get_size() / sizeof(float);
  if (pool_size != 0) {
    const WindowGeometry pool = make_window_geometry(batch, g.out_height, g.out_width, filters, filters, 2, 2, 2, 2,
                                                     Padding::valid, 1, 1, 1);
    DirectConv2DKernel direct(g, activation, true, stored, true, DType::float32, DType::float32, pool);
    report("tenfold direct + max pooling", DType::float32,
           best_times(direct, g, DType::float32, weights, repeats, &pool));
    return 0;
  }
  // bfloat16 where the CPU has bfloat16 units: oneDNN has no bfloat16 convolution elsewhere.
  std::vector<DType> dtypes = {DType::float32};
  if (cpu_has_bfloat16_units()) dtypes.push_back(DType::bfloat16);
  for (DType dtype : dtypes) {
    if (FewChannelConv2DKernel::handles(g, false)) {
      FewChannelConv2DKernel few_channel(g, activation, true, stored, true, dtype);
      report("tenfold few-channel", dtype, best_times(few_channel, g, dtype, weights, repeats));
    }
    if (DirectConv2DKernel::handles(g, activation, false)) {
      DirectConv2DKernel direct(g, activation, true, stored, true, dtype, dtype);
      report("tenfold direct", dtype, best_times(direct, g, dtype, weights, repeats));
    }
    onednn::Conv2DKernel onednn(g, activation, true, stored, false, dtype);
    report("onednn", dtype, best_times(onednn, g, dtype, weights, repeats));
  }
  return 0;
}
