// tenfold train: the recipe, on any model and data. Resolve the cluster and connect, make the
// strategy, load or build the model and compile it in its scope, feed it the tf.data-style
// pipeline with the global batch, fit with validation, evaluate.
#include <chrono>
#include <cstdio>
#include <fstream>

#include "callbacks/backup_and_restore.h"
#include "callbacks/tensorboard.h"
#include "cli/cluster.h"
#include "cli/commands.h"
#include "cli/data.h"
#include "core/error.h"
#include "core/random.h"
#include "io/model_file.h"
#include "models/memory_check.h"
#include "models/seed_cnn.h"
#include "optimizers/optimizer.h"

namespace tenfold::cli {

namespace {

/// Each epoch's wall time, its validation included: from on_epoch_begin to on_epoch_end, as a
/// Keras callback timing an epoch sees it.
class EpochTimer : public callbacks::Callback {
 public:
  void on_epoch_begin(int) override { start_ = std::chrono::steady_clock::now(); }
  void on_epoch_end(int, const callbacks::Logs&) override {
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }

  std::vector<double> seconds;

 private:
  std::chrono::steady_clock::time_point start_;
};

const char* const train_help = R"(usage: tenfold train [options]

Trains a model, data-parallel over every replica, validating each epoch: by default the
recipe's CNN (Conv2D 32 3x3 relu, MaxPooling2D, Flatten, Dense 128 relu, Dense 10 softmax)
with Adam and SparseCategoricalCrossentropy on Fashion-MNIST.

options:
  --model seed-cnn|FILE     the model: the recipe's CNN (default), or a Keras file: .keras or
                            .h5 (model.save; trained files resume with their optimizer state)
                            or .json (model.to_json(), fresh weights). One input, one output.
  --loss NAME               Keras' loss name (e.g. sparse_categorical_crossentropy,
                            categorical_crossentropy, binary_crossentropy, mse); default: the
                            file's compile config, or else sparse categorical crossentropy
                            for integer labels (binary crossentropy for one sigmoid output),
                            categorical crossentropy for one-hot labels, mse for numbers
  --optimizer NAME          Keras' optimizer name (adam, sgd, rmsprop, adamw, ...); default:
                            the file's (with its state), or else adam
  --learning-rate F         the optimizer's learning rate (default: the optimizer's)
  --metrics LIST            Keras' metric names, comma-separated (default: the file's, or else
                            accuracy for classification, none for regression)
  --freeze LAYER,...        layers whose weights stay fixed (layer.trainable = False); the
                            model is compiled again, so its optimizer starts afresh
  --dtype-policy NAME       float32, mixed_bfloat16 (float32 variables, bfloat16 compute on
                            the CPU's bfloat16 units) or bfloat16 (bfloat16 variables too;
                            Adam and Nadam need a beta_2 bfloat16 holds below 1), Keras'
                            policies, for every layer (default: the file's, or float32)
  --class-weight balanced|FILE.json
                            weigh each class's samples in the training loss (Keras'
                            class_weight): balanced gives n_samples / (n_classes x count);
                            the JSON maps class indices or names to weights
  --epochs N                epochs (default 10)
  --batch-size N            global batch size, split across all replicas (default 512)
  --per-replica-batch N     or the batch of each replica: global = N x replicas
  --validation-split F      hold out the last fraction F of the samples (before shuffling, as
                            Keras' fit), or of an image directory's shuffled files
  --validation-data PATH    validate on another data set (same forms as --data)
                            (default: the data's own test split: IDX t10k files, an .npz's
                            x_test; or none)
  --seed S                  seed for initial weights and shuffling (default 1337)
  --save FILE.h5|FILE.keras save the trained model, load it back in the strategy's scope and
                            evaluate it (as the recipe does)
  --backup-dir DIR          back up training there (every epoch, or --backup-freq N batches);
                            rerunning the same command after a crash resumes from the last
                            backup (Keras' BackupAndRestore)
  --backup-freq N           batches between backups (default: at each epoch's end)
  --history FILE.json       write Keras' History (per-epoch loss, metrics and their val_
                            counterparts) as JSON, with each epoch's wall time, validation
                            included ("epoch_seconds")
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
Samples in memory flow through the recipe's pipeline,
from_tensor_slices((x, y)).shuffle(10000, seed).batch(global batch).prefetch(AUTOTUNE);
an image directory is read, decoded and shuffled as image_dataset_from_directory does.
)";

/// What --loss, --optimizer, --learning-rate, --metrics and --freeze ask for.
struct CompileOptions {
  std::optional<std::string> loss, optimizer;
  std::optional<std::vector<std::string>> metrics;
  std::optional<double> learning_rate;
  std::vector<std::string> frozen;
};

/// The loss a model without a compile config trains with, from its output and the labels.
std::string default_loss(const models::Model& model, const UserData& data) {
  const int64_t units = model.output_shape(1).num_elements();
  // The layer making the output: not always the last layer listed (a shared layer is listed
  // at its first call).
  const graph::Graph& graph = model.graph();
  const int producer = graph.producer(graph.outputs()[0]);
  const nlohmann::json last = producer >= 0 ? graph.nodes()[size_t(producer)].layer->get_config() : nlohmann::json::object();
  const std::string activation = last.value("activation", nlohmann::json("linear")).is_string()
                                     ? last.value("activation", std::string("linear"))
                                     : std::string("custom");
  const bool integer_labels = !data.image_directory.empty() || data.y.dtype() == DType::int32;
  if (units == 1 && activation == "sigmoid") return "binary_crossentropy";
  if (integer_labels && units > 1) return "sparse_categorical_crossentropy";
  if (!integer_labels && units > 1 && activation == "softmax") return "categorical_crossentropy";
  return "mean_squared_error";
}

/// Compiles the model as the options and its file say; returns what it compiled with, for the
/// user to see.
std::string compile_model(models::Model& model, const CompileOptions& options, const UserData& data) {
  for (const std::string& name : options.frozen) {
    Layer* found = nullptr;
    std::string names;
    for (Layer* layer : model.layers()) {
      if (layer->name() == name) found = layer;
      names += (names.empty() ? "" : ", ") + layer->name();
    }
    check_argument(found != nullptr, "--freeze: model '" + model.name() + "' has no layer '" + name + "'; its layers: " + names);
    found->set_trainable(false);
  }
  const bool compiled = model.optimizer() != nullptr;
  const bool recompile = !compiled || options.loss || options.optimizer || options.metrics || !options.frozen.empty();
  if (recompile) {
    std::shared_ptr<optimizers::Optimizer> optimizer =
        options.optimizer ? optimizers::get(*options.optimizer)
        : compiled        ? optimizers::from_config({{"class_name", model.optimizer()->class_name()},
                                                     {"config", model.optimizer()->get_config()}})
                          : optimizers::get("adam");
    std::shared_ptr<losses::Loss> loss = options.loss ? losses::get(*options.loss)
                                         : compiled   ? model.output_training()[0].loss
                                                      : losses::get(default_loss(model, data));
    std::vector<nlohmann::json> metrics;
    if (options.metrics) {
      for (const std::string& name : *options.metrics) metrics.push_back(name);
    } else if (compiled) {
      metrics = model.output_training()[0].metrics;
    } else if (loss->name().find("crossentropy") != std::string::npos) {
      metrics = {"accuracy"};
    }
    if (compiled && model.optimizer()->iterations() > 0 && !options.optimizer) {
      std::printf("Compiling again (--loss, --metrics or --freeze): the optimizer's state starts afresh, as "
                  "compile() does in Keras.\n");
    }
    model.compile(std::move(optimizer), std::move(loss), std::move(metrics));
  }
  if (options.learning_rate) model.optimizer()->set_learning_rate(float(*options.learning_rate));
  std::string metric_list;
  for (const std::string& name : model.metric_names()) metric_list += (metric_list.empty() ? "" : ", ") + name;
  char learning_rate[32] = "a schedule";
  if (!model.optimizer()->learning_rate_schedule()) std::snprintf(learning_rate, sizeof learning_rate, "%g", double(model.optimizer()->learning_rate()));
  return "Training with optimizer " + model.optimizer()->class_name() + " (learning rate " + learning_rate +
         "), loss " + model.loss()->name() + ", metrics [" + metric_list + "]" +
         (compiled && !recompile ? " from the model file" : "");
}

}  // namespace

int train(const std::vector<std::string>& args) {
  Arguments arguments("train", args);
  if (arguments.wants_help()) {
    std::printf("%s%s%s%s", train_help, data_options_help, cluster_options_help, pipeline_help);
    return 0;
  }
  DataOptions data_options = DataOptions::take(arguments);
  std::string model_name = arguments.take("--model", "seed-cnn");
  CompileOptions compile_options;
  compile_options.loss = arguments.take("--loss");
  compile_options.optimizer = arguments.take("--optimizer");
  if (std::vector<std::string> metrics = arguments.take_list("--metrics"); !metrics.empty()) {
    compile_options.metrics = metrics;
  }
  if (auto text = arguments.take("--learning-rate")) {
    compile_options.learning_rate = Arguments("train", {"--learning-rate", *text}).take_number("--learning-rate", 0, 0);
    check_argument(*compile_options.learning_rate > 0, "--learning-rate must be > 0, got " + *text);
  }
  compile_options.frozen = arguments.take_list("--freeze");
  std::optional<std::string> dtype_policy = arguments.take("--dtype-policy");
  std::string class_weight = arguments.take("--class-weight", "");
  int epochs = int(arguments.take_integer("--epochs", 10, 0));
  bool global_batch_given = false;
  int64_t global_batch = 512;
  if (auto text = arguments.take("--batch-size")) {
    global_batch = Arguments("train", {"--batch-size", *text}).take_integer("--batch-size", 512, 1);
    global_batch_given = true;
  }
  int64_t per_replica_batch = arguments.take_integer("--per-replica-batch", 0, 1);
  double validation_split = arguments.take_number("--validation-split", 0, 0);
  std::optional<std::string> validation_path = arguments.take("--validation-data");
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
  check_argument(validation_split < 1, "--validation-split must be below 1, got " + std::to_string(validation_split));
  check_argument(!(validation_split > 0 && validation_path), "give --validation-split or --validation-data, not both");
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
    model = model_name == "seed-cnn"           ? models::seed_cnn()
            : model_name.ends_with(".json") ? io::load_model_json(model_name)
                                               : io::load_model(model_name);
    if (dtype_policy) model->set_dtype_policy(dtype_policy_from_name(*dtype_policy));
  }
  check_argument(model->num_inputs() == 1 && model->num_outputs() == 1,
                 "tenfold train takes models with one input and one output; model '" + model->name() + "' has " +
                     std::to_string(model->num_inputs()) + " inputs and " + std::to_string(model->num_outputs()) +
                     " outputs: train it with the C++ API (Model::fit with Inputs and Targets)");
  // The data is read and checked against the model before any training work.
  UserData data = read_data(data_options, *model, "train");
  std::string compiled_with;
  {
    auto scope = strategy->scope();
    compiled_with = compile_model(*model, compile_options, data);
  }
  if (chief && verbose > 0) {
    std::fputs(model->summary().c_str(), stdout);
    std::printf("%s\n", compiled_with.c_str());
  }
  // Out-of-memory before any work.
  distribute::AvailableMemory available = distribute::available_memory();
  if (memory_limit) available = {*memory_limit, "--memory-limit"};
  models::check_training_memory(*model, global_batch, available.bytes, available.source);

  Batches train_batches = labelled_batches(data, *model, global_batch, true, seed, validation_split);
  std::optional<data::Dataset> validation = train_batches.held_out;
  if (validation_path) {
    DataOptions validation_options = data_options;
    validation_options.path = *validation_path;
    validation_options.labels_path.clear();
    check_argument(!validation_path->ends_with(".npy"),
                   "--validation-data " + *validation_path + ": a .npy file holds no labels; save samples "
                   "and labels together with np.savez(path, x=..., y=...) and give the .npz");
    validation = labelled_batches(read_data(validation_options, *model, "test"), *model, global_batch, false, seed).batches;
  } else if (!validation && data.test) {
    validation = data::Dataset::from_tensor_slices({data.test->first, data.test->second})
                     .batch(global_batch)
                     .prefetch(data::AUTOTUNE);
  }

  models::FitOptions fit;
  if (!class_weight.empty()) {
    fit.class_weight = class_weights(class_weight, train_batches);
    if (chief && verbose > 0) {
      std::printf("Class weights:");
      for (const auto& [index, weight] : fit.class_weight) std::printf(" %d: %.4g", index, weight);
      std::printf("\n");
    }
  }
  fit.epochs = epochs;
  fit.verbose = verbose;
  fit.validation_dataset = validation;
  if (!backup_dir.empty()) {
    fit.callbacks.push_back(std::make_shared<callbacks::BackupAndRestore>(backup_dir, backup_freq));
  }
  if (!log_dir.empty()) fit.callbacks.push_back(std::make_shared<callbacks::TensorBoard>(log_dir, update_freq));
  auto epoch_timer = std::make_shared<EpochTimer>();
  fit.callbacks.push_back(epoch_timer);
  models::History history = model->fit(train_batches.batches, fit);

  std::optional<std::map<std::string, double>> result;
  if (validation) result = model->evaluate(*validation, 0);
  if (!chief) return 0;
  if (result) std::printf("%s\n", test_results(*result).c_str());
  if (!save_path.empty()) {
    io::save_model(*model, save_path);
    auto scope = strategy->scope();
    auto loaded = io::load_model(save_path);
    std::printf("Saved %s", save_path.c_str());
    if (validation) {
      std::string reloaded = test_results(loaded->evaluate(*validation, 0));
      reloaded[0] = char(std::tolower(reloaded[0]));
      std::printf("; loaded back: %s", reloaded.c_str());
    }
    std::printf("\n");
  }
  if (!history_path.empty()) {
    std::ofstream out(history_path);
    nlohmann::json logged = history.to_json();
    logged["epoch_seconds"] = epoch_timer->seconds;
    out << logged.dump(2) << "\n";
    if (!out) throw Error(ErrorCode::unavailable, "could not write history to " + history_path);
  }
  return 0;
}

}  // namespace tenfold::cli
