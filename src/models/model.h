#pragma once
// keras.Model: a graph of layer calls (graph/graph.h) with Keras' compile / fit / evaluate /
// predict. Sequential (a stack) and Functional (any graph) only differ in how they make the
// graph and write their config; the training loop lives in trainer.cpp.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "callbacks/callback.h"
#include "data/dataset.h"
#include "distribute/cross_replica_sum.h"
#include "distribute/gradient_reducer.h"
#include "distribute/strategy.h"
#include "graph/graph.h"
#include "graph/keras_tensor.h"
#include "layers/layer.h"
#include "losses/loss.h"
#include "metrics/metric.h"
#include "models/compiled_step.h"
#include "models/history.h"
#include "optimizers/optimizer.h"

namespace tenfold::models {

struct FitOptions {
  int64_t batch_size = 32;
  int epochs = 1;
  int verbose = 1;
  /// (x_val, y_val), evaluated at the end of each epoch, batched with batch_size.
  std::optional<std::pair<Tensor, Tensor>> validation_data;
  /// Or a dataset of (features, labels) batches, as Keras' validation_data=dataset.
  std::optional<data::Dataset> validation_dataset;
  /// Arrays only: reshuffle all samples every epoch (a Dataset brings its own shuffle).
  bool shuffle = true;
  /// Arrays only: Keras' sample_weight, float32 [samples], each sample's loss scaled by it
  /// (the loss still averages over the batch's samples; metrics are not weighted, as Keras'
  /// `metrics`). A Dataset carries weights as a last element component.
  std::optional<Tensor> sample_weight;
  /// Keras' class_weight: class index -> weight of its samples' loss in training (classes not
  /// named weigh 1). One output only.
  std::map<int, double> class_weight;
  /// Seeds the per-epoch shuffle of arrays.
  uint64_t shuffle_seed = 0;
  /// Called as training goes (keras.callbacks): checkpoints, backups, early stopping, ...
  std::vector<std::shared_ptr<callbacks::Callback>> callbacks;
  /// The epoch to start at (earlier ones count as done).
  int initial_epoch = 0;
};

/// Where training is: the epoch, and the batch within it that runs next.
struct TrainingPosition {
  int epoch = 0;
  int64_t batch = 0;
};

/// A model's inputs for one batch, in the order of its inputs.
using Inputs = std::vector<Tensor>;
/// A model's targets (labels) for one batch, one per output in the order of its outputs.
using Targets = std::vector<Tensor>;

/// What one output trains with: its loss, its weight in the total loss (Keras' loss_weights)
/// and its metrics.
struct OutputTraining {
  std::shared_ptr<losses::Loss> loss;
  double weight = 1;
  std::vector<nlohmann::json> metrics;  // names or serialized Keras metrics
};

class Model : public std::enable_shared_from_this<Model> {
 public:
  virtual ~Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  /// "Sequential" or "Functional", as Keras writes it in configs.
  virtual std::string class_name() const = 0;
  bool built() const { return !graph_.inputs().empty(); }

  /// Pairs the model with an optimizer, a loss and metrics (Keras' compile: names such as
  /// "accuracy" or "mae", or serialized Keras metrics such as {"class_name": "AUC", "config":
  /// {"curve": "PR"}}), the loss and metrics applying to every output. The model trains with the strategy of the scope it is
  /// compiled in (see distribute/strategy.h).
  void compile(std::shared_ptr<optimizers::Optimizer> optimizer,
               std::shared_ptr<losses::Loss> loss, std::vector<nlohmann::json> metrics = {});
  void compile(const std::string& optimizer, const std::string& loss,
               std::vector<nlohmann::json> metrics = {});
  /// Keras' compile with dicts keyed by output name: loss={...}, loss_weights={...} (1 where
  /// absent), metrics={...}. Every output needs a loss. With several outputs, fit reports
  /// "loss" (the weighted total), "<output>_loss" and "<output>_<metric>", as Keras does.
  void compile(std::shared_ptr<optimizers::Optimizer> optimizer,
               const std::map<std::string, std::shared_ptr<losses::Loss>>& losses,
               const std::map<std::string, double>& loss_weights = {},
               const std::map<std::string, std::vector<nlohmann::json>>& metrics = {});

  /// x [samples, ...] float32; y labels (int32 or float32). Trains, returns per-epoch logs.
  History fit(const Tensor& x, const Tensor& y, const FitOptions& options = {});
  /// The same for a model with several inputs or outputs.
  History fit(const Inputs& x, const Targets& y, const FitOptions& options = {});
  /// Trains on a dataset of (features, labels) batches, one pass per epoch; for a model with
  /// n inputs and m outputs, elements are (input 1, ..., input n, target 1, ..., target m).
  /// Warns once when the step waits for input more than 10% of an epoch.
  History fit(const data::Dataset& dataset, const FitOptions& options = {});
  /// One optimizer step on the whole of (x, y); the loss and metrics of that batch.
  std::map<std::string, double> train_on_batch(const Tensor& x, const Tensor& y);
  std::map<std::string, double> train_on_batch(const Inputs& x, const Targets& y);
  /// {"loss": ..., "accuracy": ...} over all of x.
  std::map<std::string, double> evaluate(const Tensor& x, const Tensor& y,
                                         int64_t batch_size = 32, int verbose = 1);
  std::map<std::string, double> evaluate(const Inputs& x, const Targets& y,
                                         int64_t batch_size = 32, int verbose = 1);
  std::map<std::string, double> evaluate(const data::Dataset& dataset, int verbose = 1);
  /// The model's output for x, [samples, ...] (a model with one input and one output).
  Tensor predict(const Tensor& x, int64_t batch_size = 32);
  /// Every output for x, in the order of the outputs.
  std::vector<Tensor> predict(const Inputs& x, int64_t batch_size = 32);

  /// Keras' model called as a layer on symbolic tensors (a base model inside a new one, or
  /// one encoder for several inputs); models::Functional(inputs, outputs) then holds its
  /// layers. The model must be built and owned by a shared_ptr.
  KerasTensor operator()(const KerasTensor& input) const;
  KerasTensor operator()(const std::vector<KerasTensor>& inputs) const;
  /// Checks that the model can be called as a layer on tensors of `input_shapes` (a sample
  /// each): built, one output, the inputs it takes.
  void check_call(const std::vector<Shape>& input_shapes) const;

  /// Keras' summary table; a Functional one has a "Connected to" column.
  std::string summary() const;
  const std::string& name() const { return name_; }
  /// The layers in the order they run (no InputLayer; a nested model's layers in its place).
  std::vector<Layer*> layers() const;
  /// Gives every layer `policy` (Keras sets one before making the model, with
  /// keras.mixed_precision.set_dtype_policy); takes effect at the next compile.
  void set_dtype_policy(DTypePolicy policy);
  /// Keras' model.layers, as configs and weight files lay a model out: each a layer, or a model
  /// used as a layer (which holds its own layers).
  using Member = Caller;
  const std::vector<Member>& members() const { return members_; }
  /// A call of a member in the graph: the tensors it reads and the one it makes (a nested
  /// model's call covers its nodes). A shared member, one layer or model called on several
  /// tensors, has several calls, which use the same weights; the model learns from them all.
  struct Call {
    Member member;
    std::vector<int> inputs;
    int output;
  };
  /// In the order they run; empty until the model is built.
  const std::vector<Call>& calls() const { return calls_; }
  std::vector<Variable*> weights() const;
  /// The weights of trainable layers: what the optimizer updates (Keras' trainable_weights).
  std::vector<Variable*> trainable_weights() const;
  int64_t count_params() const;
  /// The layer graph; the model must be built.
  const graph::Graph& graph() const;
  /// Sample shape of the (first) input, no batch dimension; the model must be built.
  const Shape& input_shape() const;
  size_t num_inputs() const { return graph_.inputs().size(); }
  size_t num_outputs() const { return graph_.outputs().size(); }
  /// Shape of output `index` for a batch of `batch`.
  Shape output_shape(int64_t batch, size_t index = 0) const;
  /// The outputs' names: the layers that make them, as Keras names outputs.
  std::vector<std::string> output_names() const;
  /// {"class_name": ..., "config": {...}} as Keras' model.get_config.
  virtual nlohmann::json to_config() const = 0;
  /// The metrics of the (first) output.
  std::vector<std::string> metric_names() const;
  /// What each output trains with; empty before compile.
  const std::vector<OutputTraining>& output_training() const { return outputs_; }

  /// Asks fit to stop after the current batch (Keras' model.stop_training = True).
  void stop_training() { stop_training_ = true; }
  bool stopping() const { return stop_training_; }
  /// Where fit starts; a callback may move it in on_train_begin (to resume a run).
  void set_start_position(TrainingPosition position) { start_position_ = position; }

  optimizers::Optimizer* optimizer() const { return optimizer_.get(); }
  /// The (first) output's loss; null before compile.
  losses::Loss* loss() const { return outputs_.empty() ? nullptr : outputs_[0].loss.get(); }

  /// The step compiled for this batch size (cached; compiled on first use).
  CompiledStep& compiled_step(int64_t batch, bool training) { return replica_step(0, batch, training); }
  /// The same for one local replica of the strategy.
  CompiledStep& replica_step(int replica, int64_t batch, bool training);
  /// The strategy it was compiled with (the default one-device strategy before compile).
  distribute::Strategy& strategy() const { return *strategy_; }
  /// Seconds training steps waited, after their last gradient, for the gradient reduction
  /// (local sum and all-reduce across workers) to end.
  double reduction_wait_seconds() const { return reduction_wait_seconds_; }

 protected:
  /// `default_base` names the model when `name` is empty ("sequential", then "sequential_1").
  Model(const std::string& name, const std::string& default_base);
  /// Makes `graph` the model's (its layers built; `layers` owns them, in the order they run,
  /// a shared one listed at each call or once), dropping compiled steps. `calls` are the
  /// members' calls (by default one per node, of its layer); the members, Keras' model.layers,
  /// are the called ones in the order of their first call.
  void set_graph(graph::Graph graph, std::vector<std::shared_ptr<Layer>> layers, std::vector<Call> calls = {});

 private:
  /// The running results of fit or evaluate, named as Keras names them: "loss", then with
  /// several outputs each "<output>_loss", then the metrics.
  struct Results {
    metrics::Mean loss{"loss"};
    std::vector<metrics::Mean> output_losses;
    /// Made from the first targets seen; metric_outputs[i] is the output metrics[i] reads.
    std::vector<std::unique_ptr<metrics::Metric>> metrics;
    std::vector<size_t> metric_outputs;
    bool made = false;
    /// The loss trackers, then the metrics.
    std::vector<metrics::Metric*> all();
    Logs logs();
    void reset();
  };
  /// Sets the outputs' training and builds the optimizer.
  void compile_outputs(std::shared_ptr<optimizers::Optimizer> optimizer, std::vector<OutputTraining> outputs);
  void make_metrics(Results& results, const Targets& y) const;
  /// Each output's loss checks its targets (labels in range, shapes), naming the bad sample.
  void validate_targets(const Targets& y) const;
  /// Throws, naming `action` and the fix, unless compile() was called.
  void require_compiled(const std::string& action) const;
  /// The batch (x, y) through the model, with an optimizer step when `training`, adding to
  /// the running loss and metrics. The batch is split over the strategy's local replicas; in
  /// training, over every worker's replicas, with gradients and metrics summed across workers.
  void run_batch(const Inputs& x, const Targets& y, const Tensor& sample_weights, bool training, Results& results);
  /// Adds this worker's step results (`before`: each tracker's sums before the
  /// batch) summed over all workers; checks that all workers ran the same global batch.
  void add_global_results(const Targets& y, Results& results,
                          const std::vector<std::vector<double>>& before);
  /// After a training step: the stateful layers (BatchNormalization) update their state from
  /// the batch statistics of the first replica of the first worker. Keras' MirroredStrategy
  /// keeps a copy per replica, each following its own replica's batch, and reads and saves
  /// the first replica's: that is the copy Tenfold keeps.
  void update_layer_states(const CompiledStep& first_replica, bool across_workers);
  /// True when a layer sums over the replicas during the step (Layer::synchronizes_replicas).
  bool synchronizes_replicas() const;
  /// The reducer of this compile's gradients (made on first use).
  distribute::GradientReducer& gradient_reducer();
  /// Warns once when a multi-replica strategy exists but this model was compiled outside it.
  void warn_if_outside_scope();

  std::string name_;
  std::vector<std::shared_ptr<Layer>> layers_;
  std::vector<Member> members_;
  std::vector<Call> calls_;
  graph::Graph graph_;
  std::shared_ptr<optimizers::Optimizer> optimizer_;
  std::vector<OutputTraining> outputs_;
  // Each layer's trainable flag at compile: changing one takes a new compile, as in Keras.
  std::vector<bool> trainable_at_compile_;
  std::vector<Variable*> optimized_weights_;  // trainable_weights() at compile, the optimizer's order
  std::shared_ptr<distribute::Strategy> strategy_;
  bool warned_outside_scope_ = false;
  bool stop_training_ = false;
  TrainingPosition start_position_;
  std::unique_ptr<distribute::GradientReducer> reducer_;
  // Sums over the replicas during this compile's training steps (synchronized
  // BatchNormalization).
  std::unique_ptr<distribute::CrossReplicaSum> cross_replica_;
  double reduction_wait_seconds_ = 0;
  // Per local replica: its compiled steps by (batch, training).
  std::vector<std::map<std::pair<int64_t, bool>, std::unique_ptr<CompiledStep>>> replica_steps_;
};

/// A built model (not compiled) from Keras' model config: Sequential or Functional. Unknown
/// layer classes (Lambda included) are an error.
std::unique_ptr<Model> from_config(const nlohmann::json& config);

}  // namespace tenfold::models
