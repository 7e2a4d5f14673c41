#pragma once
// The Keras layer lifecycle: construct with arguments, build(input_shape) creates named weights,
// compute_output_shape, get_config. compile() turns a built layer into a LayerStep: its kernels
// for one fixed input shape, which a model's compiled step runs forward and backward.
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/random.h"
#include "core/tensor.h"
#include "graph/keras_tensor.h"
#include "layers/dtype_policy.h"
#include "layers/initializers.h"
#include "layers/variable.h"

namespace tenfold {

namespace distribute {
class CrossReplicaSum;
}

/// What a layer is compiled for, besides its input shape.
struct CompileOptions {
  /// False for the first layers of a model, whose input needs no gradient.
  bool need_input_gradient = true;
  /// False where no weight gradient is wanted: inference, a frozen layer.
  bool need_weight_gradients = true;
  /// The dtype the layer computes in (its policy's); a step that computes in another says so
  /// in LayerStep::compute_dtype and the model converts around it.
  DType compute_dtype = DType::float32;
  /// The worker and the replica that will run the step: random streams (Dropout's masks) are
  /// seeded with them, so no two replicas draw the same masks.
  int worker = 0;
  int replica = 0;
  /// Which call of its layer the step is (a shared layer has several): random streams differ
  /// per call too, as Keras draws each call's anew.
  int call = 0;
  /// Sums over the replicas of a step while it runs (a synchronized BatchNormalization's
  /// statistics); null outside a model's training step.
  distribute::CrossReplicaSum* cross_replica = nullptr;

  /// The key of a random layer's stream for these options and a batch of `batch`: from its
  /// seed (unseeded: its name), the worker, the replica, the batch size and the call.
  uint64_t stream_key(const std::optional<uint64_t>& seed, std::string_view layer_name, int64_t batch) const {
    const uint64_t key = Random::stream_key(seed.value_or(Random::seed_from(layer_name)),
                                            {uint64_t(worker), uint64_t(replica), uint64_t(batch)});
    return call == 0 ? key : Random::stream_key(key, {uint64_t(call)});
  }
};

/// A layer compiled for fixed input shapes (batch included). Replicas each compile their own,
/// sharing the layer's weights. A step implements either the one-input forms (most layers) or
/// the several-input forms (merge layers); the model's graph calls the several-input forms,
/// which pass a single input on to the one-input ones.
class LayerStep {
 public:
  virtual ~LayerStep() = default;
  /// input -> output; `training` enables dropout and the like.
  virtual void forward(const Tensor& input, Tensor& output, bool training);
  /// From grad_output (which it may overwrite) computes grad_input (null when the input needs
  /// no gradient) and the weight gradients, in the order of Layer::weights(), overwritten.
  /// With `grad_is_for_logits`, grad_output is already the gradient of the softmax's input
  /// (see ends_in_softmax).
  virtual void backward(const Tensor& input, const Tensor& output, Tensor& grad_output,
                        Tensor* grad_input, std::span<Tensor> weight_gradients,
                        bool grad_is_for_logits);
  /// The same for several inputs; grad_inputs[k] is null when input k needs no gradient.
  virtual void forward(std::span<const Tensor> inputs, Tensor& output, bool training);
  virtual void backward(std::span<const Tensor> inputs, const Tensor& output, Tensor& grad_output,
                        std::span<Tensor* const> grad_inputs, std::span<Tensor> weight_gradients,
                        bool grad_is_for_logits);
  /// True when the output is a softmax of logits(): a crossentropy loss then works on the
  /// logits directly, the numerically stable path Keras takes.
  virtual bool ends_in_softmax() const { return false; }
  virtual Tensor logits(const Tensor& input) const { return input; }
  /// True when the output is the input reshaped (same memory, no work).
  virtual bool is_reshape() const { return false; }
  /// What a training forward measured for the layer's state (BatchNormalization's batch mean
  /// and variance); the model passes them to Layer::update_state after the step.
  virtual std::span<const Tensor> batch_statistics() const { return {}; }
  /// The input whose gradient is the output's gradient as it is (a reshape's input, an Add's
  /// first), or -1. Its gradient may then share the output gradient's memory, and backward
  /// must allow grad_inputs[k] and grad_output to be one buffer.
  virtual int input_sharing_gradient() const { return is_reshape() ? 0 : -1; }
  /// The dtype forward and backward read and write (inputs, output and their gradients); a
  /// reshape takes any. Weights and their gradients are float32 always.
  virtual DType compute_dtype() const { return DType::float32; }
  /// The dtype of its output and the output's gradient, when not compute_dtype (a float32
  /// convolution pooled into bfloat16).
  virtual DType output_dtype() const { return compute_dtype(); }
  /// Bytes of working memory a forward or backward call needs and nothing keeps between calls
  /// (copies in another layout or dtype). Steps run one at a time, so a compiled step hands
  /// all of them one buffer of the largest (as ggml's work buffer), before the first call.
  virtual size_t scratch_bytes() const { return 0; }
  virtual void bind_scratch(std::byte* /*scratch*/) {}
};

class Layer : public std::enable_shared_from_this<Layer> {
 public:
  /// An empty name gets Keras' default: the snake_case class name, numbered from the second.
  Layer(const std::string& class_snake_name, const std::string& name);
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  /// Keras class name, e.g. "Conv2D".
  virtual std::string class_name() const = 0;
  /// The Keras module of a class outside keras.layers, as Keras files name it
  /// ("keras.src.applications.convnext" for LayerScale); empty for keras.layers' own.
  virtual std::string keras_module() const { return ""; }
  const std::string& name() const { return name_; }

  /// Creates the weights for inputs of `input_shape` (batch dimension included, its value
  /// ignored). Does nothing when already built with that shape.
  void build(const Shape& input_shape, Random& random);
  bool built() const { return built_; }
  /// Input shape it was built with, batch dimension included.
  const Shape& input_shape() const { return input_shape_; }
  /// Output shape for an input shape, batch dimension included.
  virtual Shape compute_output_shape(const Shape& input_shape) const = 0;
  /// Kernels for this exact input shape.
  virtual std::unique_ptr<LayerStep> compile(const Shape& input_shape,
                                             const CompileOptions& options) = 0;
  /// Keras config: name, trainable, dtype and the layer's own arguments.
  virtual nlohmann::json get_config() const;

  /// True for layers called on a list of inputs (merge layers). The three functions below are
  /// what a model's graph calls, with one shape per input; a one-input layer gets its one.
  virtual bool takes_input_list() const { return false; }
  void build_for(const std::vector<Shape>& input_shapes, Random& random);
  virtual Shape output_shape_for(const std::vector<Shape>& input_shapes) const;
  virtual std::unique_ptr<LayerStep> compile_for(const std::vector<Shape>& input_shapes,
                                                 const CompileOptions& options);

  /// Keras' functional API: calls the layer on symbolic tensors, building it for their shapes;
  /// models::Functional(inputs, outputs) collects the calls. The layer must be owned by a
  /// shared_ptr (std::make_shared).
  KerasTensor operator()(const KerasTensor& input);
  KerasTensor operator()(const std::vector<KerasTensor>& inputs);

  /// Keras' order: as the layer added them (trainable and state alike).
  std::vector<Variable*> weights();
  std::vector<const Variable*> weights() const;
  /// What the optimizer updates: the trainable variables, none when the layer is frozen.
  std::vector<Variable*> trainable_weights();
  /// Updates the layer's state from a training step's batch statistics (see
  /// LayerStep::batch_statistics and Model::update_layer_states).
  virtual void update_state(std::span<const Tensor> statistics);
  /// True when training this layer sums over the replicas during the step (CrossReplicaSum).
  virtual bool synchronizes_replicas() const { return false; }
  int64_t count_params() const;
  /// Keras' regularizer and constraint of the weight named `name` ("kernel", "bias", "gamma",
  /// ...), from the layer's <key>_regularizer and <key>_constraint arguments; empty removes
  /// them. The training step adds the penalties to the loss and their gradients to the
  /// weights', and applies the constraints after each update; registry's to_config writes them
  /// in the layer's config.
  void set_weight_regularizer(const std::string& name, std::optional<Regularizer> regularizer);
  void set_weight_constraint(const std::string& name, std::optional<Constraint> constraint);
  const std::map<std::string, Regularizer>& weight_regularizers() const { return regularizers_; }
  /// Keras' activity_regularizer: a penalty on the layer's output, divided by the batch size,
  /// added to the loss (training and evaluation alike).
  const std::optional<Regularizer>& activity_regularizer() const { return activity_regularizer_; }
  void set_activity_regularizer(std::optional<Regularizer> regularizer) { activity_regularizer_ = regularizer; }
  const std::map<std::string, Constraint>& weight_constraints() const { return constraints_; }
  /// Keras' layer.trainable: false freezes the layer's weights (fine-tuning). Takes effect at
  /// the model's next compile, as in Keras.
  bool trainable() const { return trainable_; }
  void set_trainable(bool trainable) { trainable_ = trainable; }
  /// Keras' dtype policy: the global one (set_dtype_policy) when the layer was made, or the
  /// layer's config's. Its compute dtype takes effect at the model's next compile; its
  /// variable dtype at once (bfloat16 rounds the weights).
  DTypePolicy dtype_policy() const { return dtype_policy_; }
  void set_dtype_policy(DTypePolicy policy);
  /// Whether its inputs are values that Keras casts to the compute dtype (false for indices,
  /// as an Embedding's token ids, which a bfloat16 rounding would change).
  virtual bool casts_inputs() const { return true; }

 protected:
  /// Creates weights; input_shape includes the batch dimension.
  virtual void build_weights(const Shape& input_shape, Random& random);
  /// Adds a weight named as in Keras, initialised in Keras' layout.
  Variable& add_weight(const std::string& name, const Shape& shape,
                       const Initializer& initializer, Random& random,
                       std::shared_ptr<const WeightLayout> layout = nullptr,
                       bool trainable = true);

 private:
  /// The general forms' check for layers that take one input.
  void check_one_input(const std::vector<Shape>& input_shapes) const;

  std::string name_;
  bool trainable_ = true;
  DTypePolicy dtype_policy_ = global_dtype_policy();
  bool built_ = false;
  Shape input_shape_;
  std::vector<std::unique_ptr<Variable>> weights_;
  std::map<std::string, Regularizer> regularizers_;
  std::map<std::string, Constraint> constraints_;
  std::optional<Regularizer> activity_regularizer_;
};

/// Resets the per-class counters behind default layer names (Keras' clear_session()).
void reset_layer_names();

}  // namespace tenfold
