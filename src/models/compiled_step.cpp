#include "models/compiled_step.h"

#include "core/error.h"
#include "kernels/onednn/engine.h"
#include "layers/fusion.h"

namespace tenfold::models {

CompiledStep::CompiledStep(const std::vector<Layer*>& layers, const Shape& input_shape,
                           bool training, int worker, int replica) {
  check_argument(!layers.empty(), "a model needs at least one layer before it can run");
  // One step per layer, or per pair of layers that runs faster fused (layers/fusion.h).
  std::vector<Shape> shapes = {input_shape};  // shapes[i]: input of step i
  std::vector<std::vector<Layer*>> step_layers;
  // A step's input needs a gradient only when some earlier step has weights: a Flatten
  // first makes the first Dense's backward-data (a third of its work) pointless.
  bool weights_before = false;
  for (size_t i = 0; i < layers.size();) {
    CompileOptions options{.need_input_gradient = training && weights_before,
                           .worker = worker, .replica = replica};
    kernels::onednn::CompilingLayer naming(layers[i]->name());
    std::unique_ptr<LayerStep> fused =
        i + 1 < layers.size()
            ? compile_fused(*layers[i], *layers[i + 1], shapes.back(), options)
            : nullptr;
    size_t covered = fused ? 2 : 1;
    steps_.push_back(fused ? std::move(fused) : layers[i]->compile(shapes.back(), options));
    Shape shape = shapes.back();
    for (size_t k = i; k < i + covered; ++k) {
      shape = layers[k]->compute_output_shape(shape);
      weights_before = weights_before || !layers[k]->weights().empty();
    }
    shapes.push_back(shape);
    step_layers.emplace_back(layers.begin() + long(i), layers.begin() + long(i + covered));
    std::string name;
    for (Layer* layer : step_layers.back()) name += (name.empty() ? "" : "+") + layer->name();
    step_names_.push_back(name);
    if (!weights_before) first_backward_step_ = steps_.size();
    i += covered;
  }
  const int count = static_cast<int>(steps_.size());

  // Lifetimes. Step i's output lives from its forward until its own backward (or the next
  // step's forward, without training); the gradient of that output from when the next
  // step's backward (or the loss) writes it until step i's backward reads it. A reshape
  // step's output (and its gradient) is a view of its input's, so they share one buffer.
  std::vector<int> activation_id(size_t(count) + 1, -1), gradient_id(size_t(count) + 1, -1);
  for (int i = 0; i < count; ++i) {
    size_t out = size_t(i) + 1;
    size_t bytes = size_t(shapes[out].num_elements()) * sizeof(float);
    bool view_of_input = steps_[size_t(i)]->is_reshape();
    // The model's output stays readable after the step, for metrics and predictions.
    int first = i, last = i == count - 1 ? 2 * count + 1 : training ? 2 * count - i : i + 1;
    activation_id[out] = view_of_input ? activation_id[out - 1] : plan_.add(bytes, first, last);
    if (view_of_input && activation_id[out] >= 0) plan_.extend(activation_id[out], first, last);
    if (!training) continue;
    int written = i == count - 1 ? count : 2 * count - i - 1;
    if (view_of_input && i > 0) {
      gradient_id[out] = gradient_id[out - 1];
      plan_.extend(gradient_id[out], written, 2 * count - i);
    } else {
      gradient_id[out] = plan_.add(bytes, written, 2 * count - i);
    }
  }
  plan_.finalize();
  arena_ = allocate_aligned(plan_.total_bytes());

  auto arena_view = [&](int id, const Shape& shape) {
    return Tensor::view(arena_.get() + plan_.offset(id), shape);
  };
  input_ = Tensor(input_shape);
  activations_.push_back(input_);
  for (size_t out = 1; out <= size_t(count); ++out) {
    activations_.push_back(activation_id[out] < 0 ? input_.reshaped(shapes[out])
                                                  : arena_view(activation_id[out], shapes[out]));
  }
  if (!training) return;

  gradients_.resize(size_t(count) + 1);  // gradients_[0], the input's, is never needed
  for (size_t out = 1; out <= size_t(count); ++out) {
    gradients_[out] = arena_view(gradient_id[out], shapes[out]);
  }
  // All weight gradients in one buffer, each 64-byte aligned: replicas and workers sum them
  // as one flat array (one fused all-reduce).
  std::vector<Shape> gradient_shapes;
  for (const auto& covered : step_layers) {
    weight_gradients_begin_.push_back(gradient_shapes.size());
    for (Layer* layer : covered) {
      for (Variable* weight : layer->weights()) gradient_shapes.push_back(weight->value().shape());
    }
    weight_gradients_count_.push_back(gradient_shapes.size() - weight_gradients_begin_.back());
  }
  constexpr int64_t alignment = 64 / sizeof(float);
  auto padded = [](int64_t n) { return (n + alignment - 1) / alignment * alignment; };
  int64_t total = 0;
  for (const Shape& shape : gradient_shapes) total += padded(shape.num_elements());
  weight_gradient_buffer_ = Tensor(Shape{total});
  int64_t offset = 0;
  for (const Shape& shape : gradient_shapes) {
    weight_gradients_.push_back(Tensor::view(weight_gradient_buffer_.data<float>() + offset, shape));
    offset += padded(shape.num_elements());
  }
}

void CompiledStep::forward(bool training) {
  for (size_t i = 0; i < steps_.size(); ++i) {
    steps_[i]->forward(activations_[i], activations_[i + 1], training);
  }
}

double CompiledStep::compute_loss(const losses::Loss& loss, const Tensor& y_true,
                                  double mean_over, Tensor* gradient) const {
  const LayerStep& last = *steps_.back();
  bool from_logits = loss.fuses_softmax() && last.ends_in_softmax();
  Tensor prediction = from_logits ? last.logits(activations_[steps_.size() - 1]) : output();
  return loss.compute(prediction, y_true, from_logits, mean_over, gradient);
}

double CompiledStep::backward(const losses::Loss& loss, const Tensor& y_true, double mean_over) {
  check_argument(!gradients_.empty(), "this step was compiled for inference, not training");
  double loss_sum = compute_loss(loss, y_true, mean_over, &gradients_.back());
  bool from_logits = loss.fuses_softmax() && steps_.back()->ends_in_softmax();
  for (size_t i = steps_.size(); i-- > first_backward_step_;) {
    Tensor* grad_input = i > first_backward_step_ ? &gradients_[i] : nullptr;
    std::span<Tensor> weights(weight_gradients_.data() + weight_gradients_begin_[i],
                              weight_gradients_count_[i]);
    steps_[i]->backward(activations_[i], activations_[i + 1], gradients_[i + 1], grad_input,
                        weights, from_logits && i + 1 == steps_.size());
  }
  return loss_sum;
}

}  // namespace tenfold::models
