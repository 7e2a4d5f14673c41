#pragma once
// keras.layers.BatchNormalization over the last axis. Weights in Keras' order: gamma and beta
// (trainable, present with scale / center), moving_mean and moving_variance (state).
//
// Training normalises with the batch's mean and biased variance and moves the moving
// statistics toward them: moving = moving * momentum + batch * (1 - momentum). With several
// replicas (synchronized=false, Keras' default) each replica normalises with its own batch's
// statistics, and the moving statistics follow the first replica's batch, the copy Keras'
// MirroredStrategy reads and saves (Model::update_layer_states). With synchronized=true the
// statistics (and their gradients' sums) are summed over every replica of every worker: the
// global batch's, as one replica would compute them. Inference, and a frozen layer
// (trainable=false) even in training, normalise with the moving statistics.
#include "kernels/window.h"
#include "layers/layer.h"

namespace tenfold::layers {

struct BatchNormalizationOptions {
  /// The normalised (channel) axis: the last, as -1 or as rank - 1.
  int64_t axis = -1;
  double momentum = 0.99;
  double epsilon = 1e-3;
  bool center = true;
  bool scale = true;
  Initializer beta_initializer = "zeros";
  Initializer gamma_initializer = "ones";
  Initializer moving_mean_initializer = "zeros";
  Initializer moving_variance_initializer = "ones";
  bool synchronized = false;
  std::string name;
};

class BatchNormalization : public Layer {
 public:
  explicit BatchNormalization(const BatchNormalizationOptions& options = {});
  std::string class_name() const override { return "BatchNormalization"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  /// The step of this layer followed by `activation` (the next layer's), a pass fewer forward
  /// and two backward; null unless the activation is a ReLU without negative slope (capped or
  /// not, the cap exact in the compute dtype).
  std::unique_ptr<LayerStep> compile_with_activation(const Shape& input_shape, const kernels::Activation& activation,
                                                     const CompileOptions& options);
  nlohmann::json get_config() const override;
  /// statistics: a training batch's mean and variance.
  void update_state(std::span<const Tensor> statistics) override;
  bool synchronizes_replicas() const override { return options_.synchronized && trainable(); }

 protected:
  void build_weights(const Shape& input_shape, Random& random) override;

 private:
  BatchNormalizationOptions options_;
  Variable* gamma_ = nullptr;
  Variable* beta_ = nullptr;
  Variable* moving_mean_ = nullptr;
  Variable* moving_variance_ = nullptr;
};

}  // namespace tenfold::layers
