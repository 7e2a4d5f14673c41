// tenfold train: the recipe. Resolve the cluster and connect, make the strategy, build and
// compile the model in its scope, feed it the tf.data-style pipeline with the global batch,
// fit with validation, evaluate.
#include <cstdio>
#include <fstream>

#include "callbacks/backup_and_restore.h"
#include "callbacks/tensorboard.h"
#include "cli/cluster.h"
#include "cli/commands.h"
#include "cli/data_option.h"
#include "core/error.h"
#include "core/random.h"
#include "io/model_file.h"
#include "models/memory_check.h"
#include "models/seed_cnn.h"

namespace tenfold::cli {

namespace {

const char* const help = R"(usage: tenfold train [options]

Trains the recipe's CNN (Conv2D 32 3x3 relu, MaxPooling2D, Flatten, Dense 128 relu,
Dense 10 softmax) with Adam and SparseCategoricalCrossentropy, reporting accuracy,
validating on the test split each epoch, data-parallel over every replica.

options:
  --model seed-cnn|FILE.json
                            the model: the recipe's CNN (default), or a Keras model JSON
                            (model.to_json()) taking 28x28x1 images and giving 10 classes
  --epochs N                epochs (default 10)
  --batch-size N            global batch size, split across all replicas (default 512)
  --per-replica-batch N     or the batch of each replica: global = N x replicas
  --seed S                  seed for initial weights and shuffling (default 1337)
  --save FILE.h5            save the trained model as a Keras .h5 file, load it back in the
                            strategy's scope and evaluate it (as the recipe does)
  --backup-dir DIR          back up training there (every epoch, or --backup-freq N batches);
                            rerunning the same command after a crash resumes from the last
                            backup (Keras' BackupAndRestore)
  --backup-freq N           batches between backups (default: at each epoch's end)
  --history FILE.json       write Keras' History (per-epoch loss, accuracy, val_loss,
                            val_accuracy) as JSON
  --log-dir DIR             TensorBoard event files (Keras' TensorBoard callback): DIR/train
                            and DIR/validation, scalars per epoch; see them with
                            tensorboard --logdir DIR
  --update-freq N           with --log-dir, also write the batch scalars every N batches
  --verbose 0|1|2           progress output as Keras' fit (default 1): a progress bar on a
                            terminal, a line per epoch otherwise
  --memory-limit SIZE       memory training may use, e.g. 4G (default: what is available);
                            checked before training against the measured needs of the
                            compiled steps and the input batches (the data set not counted)
)";

const char* const pipeline_help = R"(
The training data flows through the recipe's pipeline,
from_tensor_slices((x, y)).shuffle(10000, seed).batch(global batch).prefetch(AUTOTUNE).
)";

}  // namespace

int train(const std::vector<std::string>& args) {
  Arguments arguments("train", args);
  if (arguments.wants_help()) {
    std::printf("%s%s%s%s", help, data_option_help, cluster_options_help, pipeline_help);
    return 0;
  }
  std::string data_name = arguments.take("--data", "fashion-mnist");
  std::string model_name = arguments.take("--model", "seed-cnn");
  int epochs = int(arguments.take_integer("--epochs", 10, 0));
  bool global_batch_given = false;
  int64_t global_batch = 512;
  if (auto text = arguments.take("--batch-size")) {
    global_batch = Arguments("train", {"--batch-size", *text}).take_integer("--batch-size", 512, 1);
    global_batch_given = true;
  }
  int64_t per_replica_batch = arguments.take_integer("--per-replica-batch", 0, 1);
  uint64_t seed = uint64_t(arguments.take_integer("--seed", 1337, 0));
  std::string history_path = arguments.take("--history", "");
  std::string save_path = arguments.take("--save", "");
  std::string backup_dir = arguments.take("--backup-dir", "");
  int64_t backup_freq = arguments.take_integer("--backup-freq", 0, 1);
  std::string log_dir = arguments.take("--log-dir", "");
  int64_t update_freq = arguments.take_integer("--update-freq", 0, 1);
  int verbose = int(arguments.take_integer("--verbose", 1, 0));
  std::optional<size_t> memory_limit = arguments.take_bytes("--memory-limit");
  auto strategy = resolve_and_connect(arguments);
  arguments.finish();
  check_argument(!(global_batch_given && per_replica_batch),
                 "give --batch-size (global) or --per-replica-batch, not both");
  check_argument(!backup_freq || !backup_dir.empty(), "--backup-freq needs --backup-dir");
  check_argument(!update_freq || !log_dir.empty(), "--update-freq needs --log-dir");
  if (per_replica_batch) global_batch = per_replica_batch * strategy->num_replicas_in_sync();
  const bool chief = strategy->is_chief();
  if (chief && verbose > 0) {
    std::printf("Number of replicas: %d (%d worker%s x %d device%s)\n",
                strategy->num_replicas_in_sync(), strategy->num_workers(),
                strategy->num_workers() == 1 ? "" : "s", strategy->num_local_replicas(),
                strategy->num_local_replicas() == 1 ? "" : "s");
  }

  set_random_seed(seed);
  std::unique_ptr<models::Model> model;
  {
    auto scope = strategy->scope();
    model = model_name == "seed-cnn" ? models::seed_cnn() : io::load_model_json(model_name);
    model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  }
  if (chief && verbose > 0) std::fputs(model->summary().c_str(), stdout);
  // Out-of-memory before any work, even before reading the data (Fashion-MNIST takes ~0.6 s).
  distribute::AvailableMemory available = distribute::available_memory();
  if (memory_limit) available = {*memory_limit, "--memory-limit"};
  models::check_training_memory(*model, global_batch, available.bytes, available.source);

  datasets::ImageClassificationDatasets data = load_data_option(data_name);
  data::Dataset train_batches =
      data.train.shuffle(10000, seed).batch(global_batch).prefetch(data::AUTOTUNE);
  data::Dataset test_batches = data.test.batch(global_batch).prefetch(data::AUTOTUNE);

  models::FitOptions fit;
  fit.epochs = epochs;
  fit.verbose = verbose;
  fit.validation_dataset = test_batches;
  if (!backup_dir.empty()) {
    fit.callbacks.push_back(std::make_shared<callbacks::BackupAndRestore>(backup_dir, backup_freq));
  }
  if (!log_dir.empty()) fit.callbacks.push_back(std::make_shared<callbacks::TensorBoard>(log_dir, update_freq));
  models::History history = model->fit(train_batches, fit);

  auto result = model->evaluate(test_batches, 0);
  if (!chief) return 0;
  std::printf("%s\n", test_results(result).c_str());
  if (!save_path.empty()) {
    io::save_model(*model, save_path);
    auto scope = strategy->scope();
    auto loaded = io::load_model(save_path);
    auto reloaded = loaded->evaluate(test_batches, 0);
    std::printf("Saved %s; loaded back: test loss: %.4f - test accuracy: %.4f\n", save_path.c_str(),
                reloaded.at("loss"), reloaded.at("accuracy"));
  }
  if (!history_path.empty()) {
    std::ofstream out(history_path);
    out << history.to_json().dump(2) << "\n";
    if (!out) throw Error(ErrorCode::unavailable, "could not write history to " + history_path);
  }
  return 0;
}

}  // namespace tenfold::cli
