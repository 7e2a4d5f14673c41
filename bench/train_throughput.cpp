// Training throughput of the recipe's model (or --model FILE.json, a Keras model JSON):
// samples/s of optimizer steps on Fashion-MNIST batches (the global batch), after warm-up.
// Prints one JSON line; bench/train_throughput.py runs it side by side with PyTorch and Keras,
// bench/scaling.py over replicas and processes.
//   tenfold-bench-train [--batch-size 512] [--steps 20] [--repeats 5] [--warmup 5] [--devices N]
//                       [--model FILE.json] [--dtype-policy float32|mixed_bfloat16|bfloat16]
//                       [--optimizer adam]  (a Keras optimizer name; under bfloat16, Adam's
//                                            default beta_2 refuses to train: use sgd)
// Reports the median and the best of `repeats` timed windows of `steps` steps: on a shared
// machine the best window is the least disturbed one.
// Without --devices: one replica, threads from OMP_NUM_THREADS (oneDNN's team). With it: that
// many local replicas. Under mpirun: every process's replicas, worker 0 reports.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "datasets/mnist.h"
#include "datasets/idx.h"
#include "distribute/strategy.h"
#include "io/model_file.h"
#include "models/seed_cnn.h"

using namespace tenfold;

namespace {

int run_benchmark(int argc, char** argv) {
  int64_t batch_size = 512, steps = 20, repeats = 5, warmup = 5, devices = 0;
  std::string model_json, dtype_policy = "float32", optimizer = "adam";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string option = argv[i];
    int64_t value = std::atoll(argv[i + 1]);
    if (option == "--model") model_json = argv[i + 1];
    if (option == "--dtype-policy") dtype_policy = argv[i + 1];
    if (option == "--optimizer") optimizer = argv[i + 1];
    if (option == "--batch-size") batch_size = value;
    if (option == "--steps") steps = value;
    if (option == "--warmup") warmup = value;
    if (option == "--repeats") repeats = value;
    if (option == "--devices") devices = value;
  }
  auto resolver = distribute::ClusterResolver::from_environment();
  std::shared_ptr<distribute::Strategy> strategy =
      resolver.launched_by_mpi() ? distribute::Strategy::multi_worker(resolver, distribute::split_cpu(int(std::max<int64_t>(devices, 1))))
      : devices > 0              ? distribute::Strategy::mirrored(distribute::split_cpu(int(devices)))
                                 : distribute::Strategy::one_device();
  auto data = datasets::fashion_mnist::load_data();
  Tensor x = datasets::images_to_float(data.train.images, 1.0f / 255.0f);
  Tensor y = datasets::labels_to_int32(data.train.labels);
  std::unique_ptr<models::Model> model;
  {
    auto scope = strategy->scope();
    model = model_json.empty() ? models::seed_cnn() : io::load_model_json(model_json);
    model->set_dtype_policy(dtype_policy_from_name(dtype_policy));
    model->compile(optimizer, "sparse_categorical_crossentropy", {"accuracy"});
  }
  int64_t batches = x.shape()[0] / batch_size;
  auto run = [&](int64_t count, int64_t first) {
    for (int64_t s = 0; s < count; ++s) {
      int64_t begin = ((first + s) % batches) * batch_size;
      model->train_on_batch(x.slice_batch(begin, begin + batch_size),
                            y.slice_batch(begin, begin + batch_size));
    }
  };
  run(warmup, 0);
  std::vector<double> seconds;
  for (int64_t r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    run(steps, warmup + r * steps);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (!strategy->is_chief()) return 0;
  std::sort(seconds.begin(), seconds.end());
  double best = seconds.front(), median = seconds[seconds.size() / 2];
  // The time a step waited, after its last gradient, for the gradients' sum across replicas
  // and workers (TENFOLD_OVERLAP_REDUCTION=0 starts that sum only after backward).
  const double reduction_wait_ms = model->reduction_wait_seconds() * 1e3 / double(warmup + repeats * steps);
  // The arena of one replica's training step (the one trained: the global batch split evenly).
  const int64_t replica_batch = batch_size / strategy->num_replicas_in_sync();
  const models::CompiledStep& step = model->compiled_step(replica_batch, true);
  const double arena_mib = double(step.arena_bytes()) / (1 << 20), scratch_mib = double(step.scratch_bytes()) / (1 << 20);
  std::printf("{\"framework\": \"tenfold\", \"replicas\": %d, \"best_samples_per_second\": %.1f, "
              "\"median_samples_per_second\": %.1f, \"best_ms_per_step\": %.3f, "
              "\"reduction_wait_ms_per_step\": %.3f, \"arena_mib\": %.1f, \"scratch_mib\": %.1f}\n",
              strategy->num_replicas_in_sync(), double(steps * batch_size) / best,
              double(steps * batch_size) / median, best * 1e3 / double(steps), reduction_wait_ms, arena_mib, scratch_mib);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_benchmark(argc, argv);
  } catch (const Error& error) {
    std::fprintf(stderr, "tenfold-bench-train: %s\n", error.what());
    return 1;
  }
}
