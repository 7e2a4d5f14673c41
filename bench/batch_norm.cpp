// Tenfold's BatchNormalization kernel (kernels/batch_norm.h) in float32 and bfloat16 on the
// same layer (resnet_bn's first: 256 x 28x28 rows of 16 channels, a fused ReLU): the best of
// --repeats training calls, forward (statistics and normalization) and backward (its sums and
// the input gradient), in ms, one JSON line per dtype; the dtypes take turns call by call.
//   tenfold-bench-batch-norm [--rows 200704] [--channels 16] [--relu 1] [--repeats 20]
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kernels/batch_norm.h"
#include "kernels/timing.h"

using namespace tenfold;
using namespace tenfold::kernels;

int main(int argc, char** argv) {
  int64_t rows = 256 * 28 * 28, channels = 16, relu = 1, repeats = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    const int64_t value = std::atoll(argv[i + 1]);
    if (option == "--rows") rows = value;
    if (option == "--channels") channels = value;
    if (option == "--relu") relu = value;
    if (option == "--repeats") repeats = value;
  }
  const DType dtypes[] = {DType::float32, DType::bfloat16};
  std::vector<BatchNormKernel> kernels;
  std::vector<std::shared_ptr<std::byte>> src, dst, diff_dst, diff_src;
  for (DType dtype : dtypes) {
    BatchNormGeometry g{.rows = rows, .channels = channels, .dtype = dtype, .relu = relu != 0};
    kernels.emplace_back(g);
    const size_t bytes = size_t(rows * channels) * dtype_size(dtype);
    for (auto* buffer : {&src, &dst, &diff_dst, &diff_src}) {
      buffer->push_back(allocate_aligned(bytes));  // zeros: the speed does not depend on values
    }
  }
  const size_t c = size_t(channels);
  std::vector<float> mean(c), variance(c, 1.0f), gamma(c, 1.0f), beta(c), diff_gamma(c), diff_beta(c);
  std::vector<double> sums(2 * c);
  std::vector<std::function<void()>> runs;
  for (size_t k = 0; k < kernels.size(); ++k) {
    runs.push_back([&, k] {
      kernels[k].forward_sums(src[k].get(), sums.data());
      kernels[k].statistics_from(sums.data(), double(rows), mean.data(), variance.data());
      kernels[k].normalize(src[k].get(), mean.data(), variance.data(), gamma.data(), beta.data(), dst[k].get());
    });
    runs.push_back([&, k] {
      kernels[k].backward_sums(src[k].get(), diff_dst[k].get(), sums.data());
      kernels[k].backward_through_statistics(src[k].get(), diff_dst[k].get(), mean.data(), variance.data(),
                                             gamma.data(), sums.data(), double(rows), sums.data(),
                                             diff_src[k].get(), diff_gamma.data(), diff_beta.data());
    });
  }
  const std::vector<double> seconds = best_seconds_in_turns(runs, int(repeats));
  for (size_t k = 0; k < kernels.size(); ++k) {
    std::printf("{\"dtype\": \"%s\", \"rows\": %lld, \"channels\": %lld, \"relu\": %s, \"forward_ms\": %.3f, "
                "\"backward_ms\": %.3f}\n",
                dtypes[k] == DType::bfloat16 ? "bfloat16" : "float32", (long long)rows, (long long)channels,
                relu ? "true" : "false", 1e3 * seconds[2 * k], 1e3 * seconds[2 * k + 1]);
  }
  return 0;
}
