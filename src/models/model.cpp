#include "models/model.h"

#include "metrics/metric.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/error.h"
#include "core/random.h"

namespace tenfold::models {

namespace {

std::string default_model_name(const std::string& base) {
  static std::map<std::string, int> counts;
  int count = counts[base]++;
  return count == 0 ? base : base + "_" + std::to_string(count);
}

}  // namespace

Model::Model(const std::string& name, const std::string& default_base)
    : name_(name.empty() ? default_model_name(default_base) : name),
      strategy_(distribute::current_strategy()),
      replica_steps_(1) {}

void Model::set_graph(graph::Graph graph, std::vector<std::shared_ptr<Layer>> layers, std::vector<Call> calls) {
  graph_ = std::move(graph);
  layers_.clear();
  std::set<const Layer*> kept;
  for (auto& layer : layers) {
    if (kept.insert(layer.get()).second) layers_.push_back(std::move(layer));
  }
  if (calls.empty()) {
    for (const graph::Node& node : graph_.nodes()) calls.push_back({{node.layer->shared_from_this(), nullptr}, node.inputs, node.output});
  }
  calls_ = std::move(calls);
  members_.clear();
  std::set<const void*> listed;
  for (const Call& call : calls_) {
    if (listed.insert(call.member.identity()).second) members_.push_back(call.member);
  }
  if (calls_.empty()) {  // not built: the layers, as they will be called
    for (const auto& layer : layers_) members_.push_back({layer, nullptr});
  }
  reducer_.reset();
  for (auto& steps : replica_steps_) steps.clear();
}

KerasTensor Model::operator()(const KerasTensor& input) const { return (*this)(std::vector<KerasTensor>{input}); }

KerasTensor Model::operator()(const std::vector<KerasTensor>& inputs) const {
  std::shared_ptr<const Model> self = weak_from_this().lock();
  check_argument(self != nullptr, "model '" + name_ + "' must be owned by a shared_ptr (std::make_shared) to be "
                                  "called on tensors");
  std::vector<Shape> shapes;
  for (const KerasTensor& input : inputs) shapes.push_back(input.shape());
  check_call(shapes);
  return KerasTensor(self, inputs, graph_.sample_shape(graph_.outputs()[0]));
}

void Model::check_call(const std::vector<Shape>& input_shapes) const {
  check_argument(built(), "model '" + name_ + "' is not built: give it an Input before calling it on tensors");
  check_argument(num_outputs() == 1, "model '" + name_ + "' has " + std::to_string(num_outputs()) +
                                         " outputs; a model called as a layer must have one");
  check_argument(input_shapes.size() == num_inputs(), "model '" + name_ + "' takes " + std::to_string(num_inputs()) +
                                                          " input(s) but is called on " +
                                                          std::to_string(input_shapes.size()));
  for (size_t i = 0; i < input_shapes.size(); ++i) {
    const Shape& expected = graph_.sample_shape(graph_.inputs()[i]);
    check_argument(input_shapes[i] == expected, "model '" + name_ + "' takes inputs " +
                                                    expected.with_leading(0).to_string(true) + " but is called on " +
                                                    input_shapes[i].with_leading(0).to_string(true));
  }
}

void Model::compile(std::shared_ptr<optimizers::Optimizer> optimizer,
                    std::shared_ptr<losses::Loss> loss, std::vector<nlohmann::json> metrics) {
  check_argument(loss != nullptr, "compile needs a loss");
  compile_outputs(std::move(optimizer),
                  std::vector<OutputTraining>(std::max<size_t>(num_outputs(), 1), {loss, 1, metrics}));
}

void Model::compile(const std::string& optimizer, const std::string& loss,
                    std::vector<nlohmann::json> metrics) {
  compile(optimizers::get(optimizer), losses::get(loss), std::move(metrics));
}

void Model::compile(std::shared_ptr<optimizers::Optimizer> optimizer,
                    const std::map<std::string, std::shared_ptr<losses::Loss>>& losses,
                    const std::map<std::string, double>& loss_weights,
                    const std::map<std::string, std::vector<nlohmann::json>>& metrics) {
  check_argument(built(), "model '" + name_ + "' is not built: build it before compile");
  const std::vector<std::string> names = output_names();
  std::string known;
  for (const std::string& name : names) known += (known.empty() ? "'" : ", '") + name + "'";
  auto check_keys = [&](const auto& map, const std::string& what) {
    for (const auto& [key, value] : map) {
      check_argument(std::count(names.begin(), names.end(), key) == 1,
                     what + " names output '" + key + "', but model '" + name_ + "' has outputs " + known);
    }
  };
  check_keys(losses, "the loss");
  check_keys(loss_weights, "loss_weights");
  check_keys(metrics, "metrics");
  std::vector<OutputTraining> outputs;
  for (const std::string& name : names) {
    auto loss = losses.find(name);
    check_argument(loss != losses.end() && loss->second != nullptr,
                   "output '" + name + "' of model '" + name_ + "' has no loss: give every output one");
    auto weight = loss_weights.find(name);
    auto output_metrics = metrics.find(name);
    outputs.push_back({loss->second, weight == loss_weights.end() ? 1.0 : weight->second,
                       output_metrics == metrics.end() ? std::vector<nlohmann::json>{} : output_metrics->second});
  }
  compile_outputs(std::move(optimizer), std::move(outputs));
}

std::vector<std::string> Model::metric_names() const {
  std::vector<std::string> names;
  for (const nlohmann::json& metric : outputs_.at(0).metrics) names.push_back(metrics::name_of(metric));
  return names;
}

void Model::compile_outputs(std::shared_ptr<optimizers::Optimizer> optimizer,
                            std::vector<OutputTraining> outputs) {
  check_argument(optimizer != nullptr, "compile needs an optimizer");
  check_argument(built(), "model '" + name_ + "' is not built: start it with "
                          "layers::Input(shape) or call build(sample_shape) before compile");
  for (const OutputTraining& output : outputs) {
    check_argument(output.loss != nullptr, "compile needs a loss");
    check_argument(std::isfinite(output.weight) && output.weight >= 0,
                   "loss weights must be finite and not negative, got " + std::to_string(output.weight));
  }
  optimizer_ = std::move(optimizer);
  outputs_ = std::move(outputs);
  optimized_weights_ = trainable_weights();
  optimizer_->build(optimized_weights_);
  trainable_at_compile_.clear();
  for (const auto& layer : layers_) trainable_at_compile_.push_back(layer->trainable());
  strategy_ = distribute::current_strategy();
  reducer_.reset();
  // Made here, not on first use: replica threads compile their steps side by side.
  cross_replica_ = std::make_unique<distribute::CrossReplicaSum>(
      strategy_->num_local_replicas(), strategy_->num_workers() > 1 ? &strategy_->communicator() : nullptr);
  replica_steps_.clear();
  replica_steps_.resize(size_t(strategy_->num_local_replicas()));
}

std::vector<Layer*> Model::layers() const {
  std::vector<Layer*> result;
  for (const auto& layer : layers_) result.push_back(layer.get());
  return result;
}

void Model::set_dtype_policy(DTypePolicy policy) {
  for (const auto& layer : layers_) layer->set_dtype_policy(policy);
}

std::vector<Variable*> Model::weights() const {
  std::vector<Variable*> result;
  for (const auto& layer : layers_) {
    for (Variable* weight : layer->weights()) result.push_back(weight);
  }
  return result;
}

std::vector<Variable*> Model::trainable_weights() const {
  std::vector<Variable*> result;
  for (const auto& layer : layers_) {
    for (Variable* weight : layer->trainable_weights()) result.push_back(weight);
  }
  return result;
}

int64_t Model::count_params() const {
  int64_t count = 0;
  for (const auto& layer : layers_) count += layer->count_params();
  return count;
}

const graph::Graph& Model::graph() const {
  check_argument(built(), "model '" + name_ + "' is not built yet");
  return graph_;
}

const Shape& Model::input_shape() const { return graph().sample_shape(graph().inputs()[0]); }

Shape Model::output_shape(int64_t batch, size_t index) const {
  return graph().sample_shape(graph().outputs().at(index)).with_leading(batch);
}

std::vector<std::string> Model::output_names() const {
  std::vector<std::string> names;
  for (int output : graph().outputs()) {
    const int producer = graph().producer(output);
    names.push_back(producer >= 0 ? graph().nodes()[size_t(producer)].layer->name() : "output");
  }
  return names;
}

CompiledStep& Model::replica_step(int replica, int64_t batch, bool training) {
  auto& step = replica_steps_.at(size_t(replica))[{batch, training}];
  if (!step) {
    step = std::make_unique<CompiledStep>(graph(), batch, training, strategy_->communicator().rank(),
                                          replica, cross_replica_.get());
  }
  return *step;
}

bool Model::synchronizes_replicas() const {
  for (const auto& layer : layers_) {
    if (layer->synchronizes_replicas()) return true;
  }
  return false;
}

}  // namespace tenfold::models
