#include "layers/batch_normalization.h"

#include "core/error.h"
#include "distribute/cross_replica_sum.h"
#include "kernels/batch_norm.h"
#include "kernels/bfloat16.h"

namespace tenfold::layers {

namespace {

using kernels::BatchNormGeometry;
using kernels::BatchNormKernel;

class BatchNormStep : public LayerStep {
 public:
  /// `batch_statistics`: training normalises with the batch's statistics (a trainable layer);
  /// otherwise always with the moving ones. `synchronized` (non-null): the batch is every
  /// replica's, summed through it.
  BatchNormStep(const BatchNormGeometry& geometry, bool batch_statistics,
                distribute::CrossReplicaSum* synchronized, int replica, Variable* gamma,
                Variable* beta, Variable* moving_mean, Variable* moving_variance)
      : kernel_(geometry),
        batch_statistics_(batch_statistics),
        synchronized_(synchronized),
        replica_(replica),
        gamma_(gamma),
        beta_(beta),
        moving_mean_(moving_mean),
        moving_variance_(moving_variance),
        statistics_{Tensor(Shape{geometry.channels}), Tensor(Shape{geometry.channels})},
        sums_(size_t(2 * geometry.channels + 1)),
        own_sums_(size_t(2 * geometry.channels)) {}

  // Keras' BatchNormalization computes in float32 from a bfloat16 input too; so does this
  // kernel, reading and writing the model's dtype.
  DType compute_dtype() const override { return kernel_.dtype(); }

  void forward(const Tensor& input, Tensor& output, bool training) override {
    used_batch_statistics_ = training && batch_statistics_;
    if (used_batch_statistics_) {
      kernel_.forward_sums(input.raw_data(), sums_.data());
      const double rows = summed_rows();
      kernel_.statistics_from(sums_.data(), rows, mean(), variance());
    }
    kernel_.normalize(input.raw_data(), mean(), variance(), data_or_null(gamma_),
                      data_or_null(beta_), output.raw_data());
  }

  // With a fused ReLU, grad_output is the gradient of the ReLU's output.
  void backward(const Tensor& input, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor> weight_gradients, bool) override {
    void* diff_src = grad_input ? grad_input->raw_data() : nullptr;
    if (!used_batch_statistics_) {  // frozen: its weights learn nothing
      kernel_.backward_with_constant_statistics(input.raw_data(), grad_output.raw_data(), variance(),
                                                data_or_null(gamma_), diff_src);
      return;
    }
    // Weight gradients in the layer's weight order: gamma, beta (when present), then the
    // state's (none).
    float* diff_gamma = gamma_ ? weight_gradients[0].data<float>() : nullptr;
    float* diff_beta = beta_ ? weight_gradients[gamma_ ? 1 : 0].data<float>() : nullptr;
    kernel_.backward_sums(input.raw_data(), grad_output.raw_data(), own_sums_.data());
    std::copy(own_sums_.begin(), own_sums_.end(), sums_.begin());
    const double rows = summed_rows();
    kernel_.backward_through_statistics(input.raw_data(), grad_output.raw_data(), mean(),
                                        variance(), data_or_null(gamma_), sums_.data(), rows,
                                        own_sums_.data(), diff_src, diff_gamma, diff_beta);
  }

  std::span<const Tensor> batch_statistics() const override {
    if (!batch_statistics_) return {};
    return statistics_;
  }

 private:
  /// With sums_ holding this replica's sums: sums them over the replicas when synchronized,
  /// and returns the number of rows they cover.
  double summed_rows() {
    sums_.back() = double(kernel_.rows());
    if (synchronized_) synchronized_->all_reduce(replica_, sums_);
    return sums_.back();
  }
  // The statistics the last forward normalised with.
  float* mean() { return used_batch_statistics_ ? statistics_[0].data<float>() : moving_mean_->value().data<float>(); }
  float* variance() {
    return used_batch_statistics_ ? statistics_[1].data<float>() : moving_variance_->value().data<float>();
  }

  BatchNormKernel kernel_;
  bool batch_statistics_;
  distribute::CrossReplicaSum* synchronized_;
  int replica_;
  bool used_batch_statistics_ = false;
  Variable* gamma_;
  Variable* beta_;
  Variable* moving_mean_;
  Variable* moving_variance_;
  std::array<Tensor, 2> statistics_;  // the last training forward's mean and variance
  std::vector<double> sums_;          // per-channel sums, then the rows they cover
  std::vector<double> own_sums_;      // this replica's backward sums
};

}  // namespace

BatchNormalization::BatchNormalization(const BatchNormalizationOptions& options)
    : Layer("batch_normalization", options.name), options_(options) {
  check_argument(options.momentum >= 0 && options.momentum <= 1,
                 "BatchNormalization momentum must be in [0, 1], got " + std::to_string(options.momentum));
  check_argument(options.epsilon > 0,
                 "BatchNormalization epsilon must be positive, got " + std::to_string(options.epsilon));
}

Shape BatchNormalization::compute_output_shape(const Shape& input_shape) const {
  check_argument(input_shape.rank() >= 2, "BatchNormalization '" + name() +
                                              "' expects inputs of rank 2 or more, got " +
                                              input_shape.to_string(true));
  check_argument(options_.axis == -1 || options_.axis == int64_t(input_shape.rank()) - 1,
                 "BatchNormalization '" + name() + "' normalises the last axis (channels_last); "
                 "got axis=" + std::to_string(options_.axis) + " for inputs " +
                     input_shape.to_string(true) + ": use axis=-1");
  return input_shape;
}

void BatchNormalization::build_weights(const Shape& input_shape, Random& random) {
  compute_output_shape(input_shape);
  const Shape channels{input_shape[input_shape.rank() - 1]};
  if (options_.scale) gamma_ = &add_weight("gamma", channels, options_.gamma_initializer, random);
  if (options_.center) beta_ = &add_weight("beta", channels, options_.beta_initializer, random);
  moving_mean_ = &add_weight("moving_mean", channels, options_.moving_mean_initializer,
                             random, nullptr, /*trainable=*/false);
  moving_variance_ = &add_weight("moving_variance", channels,
                                 options_.moving_variance_initializer, random, nullptr,
                                 /*trainable=*/false);
}

std::unique_ptr<LayerStep> BatchNormalization::compile(const Shape& input_shape,
                                                       const CompileOptions& options) {
  return compile_with_activation(input_shape, kernels::Activation::linear, options);
}

std::unique_ptr<LayerStep> BatchNormalization::compile_with_activation(const Shape& input_shape,
                                                                       const kernels::Activation& activation,
                                                                       const CompileOptions& options) {
  const bool relu = activation.kind == kernels::Activation::relu;
  if (!(activation.kind == kernels::Activation::linear || (relu && activation.alpha == 0))) return nullptr;
  // The fused backward takes the ReLU's derivative from the normalized value rounded to the
  // dtype, which needs a cap the dtype holds exactly (6 does; 0.6 in bfloat16 does not).
  if (relu && options.compute_dtype == DType::bfloat16 &&
      kernels::to_float(kernels::to_bfloat16(activation.max_value)) != activation.max_value) {
    return nullptr;
  }
  const int64_t channels = input_shape[input_shape.rank() - 1];
  const BatchNormGeometry geometry{.rows = input_shape.num_elements() / channels,
                                   .channels = channels,
                                   .epsilon = options_.epsilon,
                                   .dtype = options.compute_dtype,
                                   .relu = relu,
                                   .relu_max_value = activation.max_value};
  // A frozen layer normalises with its moving statistics even in training, as in Keras.
  distribute::CrossReplicaSum* synchronized = synchronizes_replicas() ? options.cross_replica : nullptr;
  return std::make_unique<BatchNormStep>(geometry, trainable(), synchronized, options.replica,
                                         gamma_, beta_, moving_mean_, moving_variance_);
}

void BatchNormalization::update_state(std::span<const Tensor> statistics) {
  check_argument(statistics.size() == 2, "BatchNormalization takes a mean and a variance");
  // In float32 as Keras: moving * momentum + batch * (1 - momentum).
  const float keep = float(options_.momentum);
  const float take = float(1.0 - options_.momentum);
  Variable* moving[2] = {moving_mean_, moving_variance_};
  for (size_t k = 0; k < 2; ++k) {
    float* value = moving[k]->value().data<float>();
    const float* batch = statistics[k].data<float>();
    for (int64_t c = 0; c < statistics[k].num_elements(); ++c) value[c] = value[c] * keep + batch[c] * take;
  }
}

nlohmann::json BatchNormalization::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["axis"] = options_.axis;
  config["momentum"] = options_.momentum;
  config["epsilon"] = options_.epsilon;
  config["center"] = options_.center;
  config["scale"] = options_.scale;
  config["beta_initializer"] = options_.beta_initializer.get_config();
  config["gamma_initializer"] = options_.gamma_initializer.get_config();
  config["moving_mean_initializer"] = options_.moving_mean_initializer.get_config();
  config["moving_variance_initializer"] = options_.moving_variance_initializer.get_config();
  for (const char* key : {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"}) {
    config[key] = nullptr;
  }
  config["synchronized"] = options_.synchronized;
  return config;
}

}  // namespace tenfold::layers
