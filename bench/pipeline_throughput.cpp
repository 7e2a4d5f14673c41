// Input pipeline throughput: the recipe's pipeline alone, from_tensor_slices((x, y))
// .shuffle(10000).batch(512).prefetch(AUTOTUNE) over Fashion-MNIST, in samples/s, and one
// training epoch fed by it against the same epoch fed from memory (batches made beforehand).
// Then AUTOTUNE at work: a map whose function is costly (an augmentation), with 1 thread,
// with one per core, and with AUTOTUNE, which should find the second's speed by itself.
// Prints JSON; bench/pipeline_throughput.py compares with tf.data.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "datasets/mnist.h"
#include "datasets/idx.h"
#include "models/seed_cnn.h"

using namespace tenfold;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t thread_count() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                       std::filesystem::directory_iterator{});
}

/// An augmentation costing ~50 us per image here: a 3x3 box blur, repeated.
data::Element blur(const data::Element& element) {
  Tensor image = element[0].clone();
  Tensor scratch = image.clone();
  float* a = image.data<float>();
  float* b = scratch.data<float>();
  for (int repeat = 0; repeat < 150; ++repeat) {
    for (int y = 1; y < 27; ++y) {
      for (int x = 1; x < 27; ++x) {
        float sum = 0;
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) sum += a[(y + dy) * 28 + x + dx];
        }
        b[y * 28 + x] = sum / 9.0f;
      }
    }
    std::swap(a, b);
  }
  return {image, element[1]};
}

struct MapRun {
  double samples_per_second;
  int64_t threads_in_use;  // the process's threads seen mid-pass, beyond the main thread's
};

MapRun run_map(const data::Dataset& slices, int64_t num_parallel_calls) {
  data::Dataset pipeline = slices.take(4096).map(blur, num_parallel_calls).batch(512);
  double best = 1e30;
  int64_t threads = 0;
  for (int pass = 0; pass < 2; ++pass) {
    int64_t before = thread_count();
    Clock::time_point start = Clock::now();
    auto iterator = pipeline.iterate(uint64_t(pass));
    int64_t batches = 0;
    while (iterator->next()) {
      if (++batches == 4) threads = std::max(threads, thread_count() - before);
    }
    best = std::min(best, seconds_since(start));
  }
  return {4096 / best, threads};
}

int main() {
  auto data = datasets::fashion_mnist::load_data();
  Tensor x = datasets::images_to_float(data.train.images, 1.0f / 255.0f);
  Tensor y = datasets::labels_to_int32(data.train.labels);
  data::Dataset pipeline =
      data::Dataset::from_tensor_slices({x, y}).shuffle(10000, 1).batch(512).prefetch(data::AUTOTUNE);

  double best_pipeline = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    Clock::time_point start = Clock::now();
    auto iterator = pipeline.iterate(uint64_t(pass));
    while (iterator->next()) {
    }
    best_pipeline = std::min(best_pipeline, seconds_since(start));
  }

  // The same batches, made beforehand: training with no pipeline work at all.
  std::vector<data::Element> batches = pipeline.collect(0);
  auto model = models::seed_cnn();
  model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  models::FitOptions options;
  options.verbose = 0;
  data::Dataset in_memory = data::Dataset::from_generator(
      [&batches] {
        auto index = std::make_shared<size_t>(0);
        return [&batches, index]() -> std::optional<data::Element> {
          if (*index >= batches.size()) return std::nullopt;
          return batches[(*index)++];
        };
      },
      {});
  model->fit(in_memory, options);  // warm-up: compiles the steps
  double memory_epoch = 1e30, pipeline_epoch = 1e30;
  for (int round = 0; round < 2; ++round) {
    Clock::time_point start = Clock::now();
    model->fit(in_memory, options);
    memory_epoch = std::min(memory_epoch, seconds_since(start));
    start = Clock::now();
    model->fit(pipeline, options);
    pipeline_epoch = std::min(pipeline_epoch, seconds_since(start));
  }
  data::Dataset slices = data::Dataset::from_tensor_slices({x, y});
  int64_t cores = int64_t(std::thread::hardware_concurrency());
  MapRun sequential = run_map(slices, 1), parallel = run_map(slices, cores),
         autotuned = run_map(slices, data::AUTOTUNE);

  double samples = double(x.shape()[0]);
  std::printf("{\"pipeline_samples_per_second\": %.0f, \"training_samples_per_second\": %.0f, "
              "\"pipeline_over_training\": %.1f, \"epoch_in_memory_s\": %.3f, "
              "\"epoch_with_pipeline_s\": %.3f, \"pipeline_epoch_overhead_percent\": %.1f, "
              "\"cores\": %ld, \"map_1_samples_per_second\": %.0f, "
              "\"map_per_core_samples_per_second\": %.0f, \"map_autotune_samples_per_second\": %.0f, "
              "\"map_autotune_threads\": %ld}\n",
              samples / best_pipeline, samples / memory_epoch, memory_epoch / best_pipeline,
              memory_epoch, pipeline_epoch, 100 * (pipeline_epoch / memory_epoch - 1), long(cores),
              sequential.samples_per_second, parallel.samples_per_second,
              autotuned.samples_per_second, long(autotuned.threads_in_use));
  return 0;
}
