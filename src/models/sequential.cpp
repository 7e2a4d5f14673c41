#include "models/sequential.h"

#include <cstdio>

#include "core/error.h"
#include "core/random.h"
#include "layers/input.h"
#include "layers/registry.h"

namespace tenfold::models {

namespace {

std::string default_model_name() {
  static int count = 0;
  return count++ == 0 ? "sequential" : "sequential_" + std::to_string(count - 1);
}

std::string with_thousands(int64_t value) {
  std::string digits = std::to_string(value), text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}

}  // namespace

Sequential::Sequential(std::vector<std::shared_ptr<Layer>> layers, const std::string& name)
    : name_(name.empty() ? default_model_name() : name),
      strategy_(distribute::current_strategy()),
      replica_steps_(1) {
  for (auto& layer : layers) add(std::move(layer));
}

void Sequential::add(std::shared_ptr<Layer> layer) {
  check_argument(layer != nullptr, "Sequential.add got a null layer");
  if (auto input = std::dynamic_pointer_cast<layers::InputLayer>(layer)) {
    check_argument(layers_.empty() && !input_shape_,
                   "an Input must come first in a Sequential model");
    build(input->sample_shape());
    return;
  }
  for (auto& steps : replica_steps_) steps.clear();
  layers_.push_back(std::move(layer));
  if (input_shape_) {
    Shape shape = input_shape_->with_leading(1);
    for (auto& each : layers_) {
      each->build(shape, global_random());
      shape = each->compute_output_shape(shape);
    }
  }
}

void Sequential::build(const Shape& sample_shape) {
  Shape shape = sample_shape.with_leading(1);
  for (auto& layer : layers_) {
    layer->build(shape, global_random());
    shape = layer->compute_output_shape(shape);
  }
  input_shape_ = sample_shape;
}

void Sequential::compile(std::shared_ptr<optimizers::Optimizer> optimizer,
                         std::shared_ptr<losses::Loss> loss, std::vector<std::string> metrics) {
  check_argument(optimizer && loss, "compile needs an optimizer and a loss");
  check_argument(built(), "model '" + name_ + "' is not built: start it with "
                          "layers::Input(shape) or call build(sample_shape) before compile");
  optimizer_ = std::move(optimizer);
  loss_ = std::move(loss);
  metric_names_ = std::move(metrics);
  optimizer_->build(weights());
  strategy_ = distribute::current_strategy();
  replica_steps_.clear();
  replica_steps_.resize(size_t(strategy_->num_local_replicas()));
}

void Sequential::compile(const std::string& optimizer, const std::string& loss,
                         std::vector<std::string> metrics) {
  compile(optimizers::get(optimizer), losses::get(loss), std::move(metrics));
}

std::vector<Layer*> Sequential::layers() const {
  std::vector<Layer*> result;
  for (const auto& layer : layers_) result.push_back(layer.get());
  return result;
}

std::vector<Variable*> Sequential::weights() const {
  std::vector<Variable*> result;
  for (const auto& layer : layers_) {
    for (Variable* weight : layer->weights()) result.push_back(weight);
  }
  return result;
}

int64_t Sequential::count_params() const {
  int64_t count = 0;
  for (const auto& layer : layers_) count += layer->count_params();
  return count;
}

const Shape& Sequential::input_shape() const {
  check_argument(built(), "model '" + name_ + "' is not built yet");
  return *input_shape_;
}

Shape Sequential::output_shape(int64_t batch) const {
  Shape shape = input_shape().with_leading(batch);
  for (const auto& layer : layers_) shape = layer->compute_output_shape(shape);
  return shape;
}

CompiledStep& Sequential::replica_step(int replica, int64_t batch, bool training) {
  auto& step = replica_steps_.at(size_t(replica))[{batch, training}];
  if (!step) {
    step = std::make_unique<CompiledStep>(layers(), input_shape().with_leading(batch), training,
                                          strategy_->communicator().rank(), replica);
  }
  return *step;
}

std::string Sequential::summary() const {
  const int widths[] = {29, 26, 10};
  std::string rule_thin(65, '_'), rule_thick(65, '=');
  auto row = [&](const std::string& a, const std::string& b, const std::string& c) {
    const std::string* cells[] = {&a, &b, &c};
    std::string text;
    // Wrap each cell over as many lines as the longest needs, as Keras does.
    size_t lines = 1;
    for (int i = 0; i < 3; ++i) {
      size_t width = size_t(widths[i] - 1);
      lines = std::max(lines, (cells[i]->size() + width - 1) / width);
    }
    for (size_t line = 0; line < lines; ++line) {
      std::string out;
      for (int i = 0; i < 3; ++i) {
        size_t width = size_t(widths[i] - 1);
        std::string part = line * width < cells[i]->size() ? cells[i]->substr(line * width, width) : "";
        out += " " + part + std::string(width - part.size(), ' ');
      }
      text += out + "\n";
    }
    return text;
  };
  std::string text = "Model: \"" + name_ + "\"\n" + rule_thin + "\n";
  text += row("Layer (type)", "Output Shape", "Param #") + rule_thick + "\n";
  Shape shape = built() ? input_shape_->with_leading(1) : Shape();
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Layer& layer = *layers_[i];
    std::string output = "?";
    if (built()) {
      shape = layer.compute_output_shape(shape);
      output = shape.to_string(true);
    }
    text += row(layer.name() + " (" + layer.class_name() + ")", output,
                std::to_string(layer.count_params()));
    if (i + 1 < layers_.size()) text += std::string(65, ' ') + "\n";
  }
  text += rule_thick + "\n";
  text += "Total params: " + with_thousands(count_params()) + "\n";
  text += "Trainable params: " + with_thousands(count_params()) + "\n";
  text += "Non-trainable params: 0\n" + rule_thin + "\n";
  return text;
}

nlohmann::json Sequential::to_config() const {
  nlohmann::json layers = nlohmann::json::array();
  if (built()) {
    layers::InputLayer input(*input_shape_, "input_layer");
    layers.push_back({{"class_name", "InputLayer"}, {"config", input.get_config()}});
  }
  for (const auto& layer : layers_) {
    layers.push_back({{"class_name", layer->class_name()}, {"config", layer->get_config()}});
  }
  return {{"class_name", "Sequential"},
          {"config", {{"name", name_}, {"trainable", true}, {"layers", layers}}}};
}

std::unique_ptr<Sequential> Sequential::from_config(const nlohmann::json& model) {
  check_argument(model.is_object() && model.value("class_name", "") == "Sequential",
                 "only Sequential models are supported, got class '" +
                     (model.is_object() ? model.value("class_name", "?") : std::string("?")) + "'");
  const nlohmann::json& config = model.at("config");
  auto result = std::make_unique<Sequential>(std::vector<std::shared_ptr<Layer>>{},
                                             config.value("name", ""));
  for (const nlohmann::json& layer : config.at("layers")) result->add(layers::from_config(layer));
  // Keras 3 writes the input shape as build_input_shape; Keras 2 on the first layer.
  const nlohmann::json* shape = nullptr;
  if (config.contains("build_input_shape")) {
    shape = &config.at("build_input_shape");
  } else if (!config.at("layers").empty() && config.at("layers")[0].at("config").contains("batch_input_shape")) {
    shape = &config.at("layers")[0].at("config").at("batch_input_shape");
  }
  if (!result->built() && shape != nullptr && shape->is_array() && !shape->empty()) {
    std::vector<int64_t> dims;
    for (size_t i = 1; i < shape->size(); ++i) dims.push_back((*shape)[i].get<int64_t>());
    result->build(Shape(dims));
  }
  check_argument(result->built(), "the model config gives no input shape (no InputLayer, no "
                                  "build_input_shape): the model cannot be built");
  return result;
}

}  // namespace tenfold::models
