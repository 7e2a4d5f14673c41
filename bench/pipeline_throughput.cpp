// Input pipeline throughput: the recipe's pipeline alone, from_tensor_slices((x, y))
// .shuffle(10000).batch(512).prefetch(AUTOTUNE) over Fashion-MNIST, in samples/s, and one
// training epoch fed by it against the same epoch fed from memory (batches made beforehand).
// Prints JSON; bench/pipeline_throughput.py compares with tf.data.
#include <chrono>
#include <cstdio>

#include "datasets/fashion_mnist.h"
#include "datasets/idx.h"
#include "models/seed_cnn.h"

using namespace tenfold;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
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
  double samples = double(x.shape()[0]);
  std::printf("{\"pipeline_samples_per_second\": %.0f, \"training_samples_per_second\": %.0f, "
              "\"pipeline_over_training\": %.1f, \"epoch_in_memory_s\": %.3f, "
              "\"epoch_with_pipeline_s\": %.3f, \"pipeline_epoch_overhead_percent\": %.1f}\n",
              samples / best_pipeline, samples / memory_epoch, memory_epoch / best_pipeline,
              memory_epoch, pipeline_epoch, 100 * (pipeline_epoch / memory_epoch - 1));
  return 0;
}
