// The Keras multi-device recipe, step by step, with Tenfold's library: one block per step, in
// the recipe's order. `make` builds it as build/examples/recipe; tests/cli/test_commands.cpp
// runs it. Under mpirun every process runs it and they train as one.
//
//   build/examples/recipe [EPOCHS] [MODEL.h5]          (defaults: 10, recipe_model.h5)
#include <cstdio>
#include <string>

#include "core/error.h"
#include "datasets/mnist.h"
#include "distribute/cluster_resolver.h"
#include "distribute/device.h"
#include "distribute/strategy.h"
#include "io/model_file.h"
#include "layers/conv2d.h"
#include "layers/dense.h"
#include "layers/flatten.h"
#include "layers/input.h"
#include "layers/pooling.h"
#include "losses/loss.h"
#include "models/memory_check.h"
#include "models/sequential.h"
#include "optimizers/adam.h"

using namespace tenfold;

int main(int argc, char** argv) try {
  const std::string epochs_text = argc > 1 ? argv[1] : "10";
  check_argument(argc <= 3 && epochs_text.find_first_not_of("0123456789") == std::string::npos,
                 "usage: recipe [EPOCHS] [MODEL.h5], EPOCHS a whole number (default 10)");
  const int epochs = std::stoi(epochs_text);
  const std::string model_path = argc > 2 ? argv[2] : "recipe_model.h5";

  // 1. Resolve the cluster: the processes mpirun (or srun) started, else this machine alone.
  distribute::ClusterResolver resolver = distribute::ClusterResolver::from_environment();

  // 2. Connect and initialise: every listed worker must answer; one that does not is named,
  //    with what to check.
  resolver.connect(/*timeout_seconds=*/30);

  // 3. The strategy: one replica per local device, on every worker.
  std::shared_ptr<distribute::Strategy> strategy =
      resolver.launched_by_mpi() ? distribute::Strategy::multi_worker(resolver) : distribute::Strategy::mirrored();
  if (strategy->is_chief()) std::printf("Number of devices: %d\n", strategy->num_replicas_in_sync());

  // 4. Build and compile the model inside strategy.scope(), so it trains on every replica.
  std::unique_ptr<models::Sequential> model;
  {
    auto scope = strategy->scope();
    model = std::make_unique<models::Sequential>(std::vector<std::shared_ptr<Layer>>{
        layers::Input({28, 28, 1}),
        std::make_shared<layers::Conv2D>(
            layers::Conv2DOptions{.filters = 32, .kernel_size = {3, 3}, .activation = "relu"}),
        std::make_shared<layers::MaxPooling2D>(),
        std::make_shared<layers::Flatten>(),
        std::make_shared<layers::Dense>(layers::DenseOptions{.units = 128, .activation = "relu"}),
        std::make_shared<layers::Dense>(layers::DenseOptions{.units = 10, .activation = "softmax"}),
    });
    model->compile(std::make_shared<optimizers::Adam>(0.001f), losses::get("sparse_categorical_crossentropy"),
                   {"accuracy"});
  }

  // 5. The input pipeline: images / 255 and labels, sliced, shuffled, batched with the global
  //    batch (per-replica batch x replicas), prefetched. Out of memory is caught first.
  const int64_t per_replica_batch = 256;
  const int64_t global_batch = per_replica_batch * strategy->num_replicas_in_sync();
  distribute::AvailableMemory memory = distribute::available_memory();
  models::check_training_memory(*model, global_batch, memory.bytes, memory.source);
  datasets::ImageClassificationData data = datasets::fashion_mnist::load_data();
  data::Dataset train = datasets::to_dataset(data.train)  // from_tensor_slices((x / 255, y))
                            .shuffle(10000, /*seed=*/1337)  // the same seed on every worker
                            .batch(global_batch)
                            .prefetch(data::AUTOTUNE);
  data::Dataset test = datasets::to_dataset(data.test).batch(global_batch).prefetch(data::AUTOTUNE);

  // 6. Train, validating on the test split after each epoch.
  models::FitOptions options;
  options.epochs = epochs;
  options.validation_dataset = test;
  options.verbose = strategy->is_chief() ? 1 : 0;
  model->fit(train, options);
  if (!strategy->is_chief()) return 0;

  // 7. Save the trained model as a Keras .h5 file.
  io::save_model(*model, model_path);

  // 8. Load it back under the scope, and evaluate it.
  auto scope = strategy->scope();
  std::unique_ptr<models::Model> restored = io::load_model(model_path);
  auto results = restored->evaluate(test, 0);
  std::printf("Restored model: test loss: %.4f - test accuracy: %.4f\n", results.at("loss"), results.at("accuracy"));
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "recipe: %s\n", error.what());
  return 1;
}
