#include "layers/normalization.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/keras_epsilon.h"

namespace tenfold::layers {

namespace {

/// y = (x - mean) / deviation, or x * deviation + mean inverted; per feature of the last axis
/// (statistics of length `features`) or for all (length 1).
class NormalizationStep : public LayerStep {
 public:
  NormalizationStep(std::vector<float> mean, std::vector<float> deviation, bool invert)
      : mean_(std::move(mean)), deviation_(std::move(deviation)), invert_(invert) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    const float* x = input.data<float>();
    float* y = output.data<float>();
    const int64_t size = int64_t(mean_.size()), count = input.num_elements();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t k = i % size;
      y[i] = invert_ ? mean_[size_t(k)] + x[i] * deviation_[size_t(k)]
                     : (x[i] - mean_[size_t(k)]) / deviation_[size_t(k)];
    }
  }

  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool) override {
    if (!grad_input) return;
    const float* dy = grad_output.data<float>();
    float* dx = grad_input->data<float>();
    const int64_t size = int64_t(mean_.size()), count = grad_output.num_elements();
    for (int64_t i = 0; i < count; ++i) {
      const float d = deviation_[size_t(i % size)];
      dx[i] = invert_ ? dy[i] * d : dy[i] / d;
    }
  }

 private:
  std::vector<float> mean_, deviation_;
  bool invert_;
};

nlohmann::json statistics_config(const std::vector<double>& values) {
  if (values.empty()) return nullptr;
  if (values.size() == 1) return values[0];
  return values;
}

}  // namespace

Normalization::Normalization(const NormalizationOptions& options)
    : Layer("normalization", options.name), options_(options) {
  check_argument(options.mean.size() == options.variance.size(),
                 "Normalization '" + name() + "': give both mean and variance (of one length), or neither and "
                 "call adapt()");
  for (double variance : options.variance) {
    check_argument(variance >= 0, "Normalization '" + name() + "': a variance is negative (" +
                                      std::to_string(variance) + ")");
  }
}

int64_t Normalization::statistics_size(const Shape& input_shape) const {
  check_argument(input_shape.rank() >= 2, "Normalization '" + name() + "' expects inputs of rank 2 or more, got " +
                                              input_shape.to_string(true));
  if (!options_.axis) return 1;
  check_argument(*options_.axis == -1 || *options_.axis == int64_t(input_shape.rank()) - 1,
                 "Normalization '" + name() + "' keeps statistics per feature of the last axis; got axis=" +
                     std::to_string(*options_.axis) + " for inputs " + input_shape.to_string(true) +
                     ": use axis=-1 or None");
  return input_shape[input_shape.rank() - 1];
}

void Normalization::build_weights(const Shape& input_shape, Random& random) {
  const int64_t size = statistics_size(input_shape);
  if (!options_.mean.empty()) {
    check_argument(options_.mean.size() == 1 || int64_t(options_.mean.size()) == size,
                   "Normalization '" + name() + "' has " + std::to_string(options_.mean.size()) +
                       " means for inputs " + input_shape.to_string(true) + " with " + std::to_string(size) +
                       " features: give one per feature, or one for all");
    return;
  }
  const Shape shape = options_.axis ? Shape{size} : Shape{};
  mean_ = &add_weight("mean", shape, Initializer("zeros"), random, nullptr, /*trainable=*/false);
  variance_ = &add_weight("variance", shape, Initializer("ones"), random, nullptr, /*trainable=*/false);
  // Keras keeps it for older files and adapt() leaves it at 0.
  add_weight("count", Shape{}, Initializer("zeros"), random, nullptr, /*trainable=*/false).set_integer(true);
}

std::unique_ptr<LayerStep> Normalization::compile(const Shape& input_shape, const CompileOptions&) {
  const int64_t size = statistics_size(input_shape);
  std::vector<float> mean(static_cast<size_t>(size)), deviation(static_cast<size_t>(size));
  for (int64_t k = 0; k < size; ++k) {
    float m, variance;
    if (mean_) {
      m = mean_->value().data<float>()[k];
      variance = variance_->value().data<float>()[k];
    } else {
      const size_t given = options_.mean.size() == 1 ? 0 : size_t(k);
      m = float(options_.mean[given]);
      variance = float(options_.variance[given]);
    }
    mean[size_t(k)] = m;
    deviation[size_t(k)] = std::max(std::sqrt(variance), keras_epsilon);  // in float, as Keras
  }
  return std::make_unique<NormalizationStep>(std::move(mean), std::move(deviation), options_.invert);
}

void Normalization::accumulate(const Tensor& batch, std::vector<double>& sums, double& count) const {
  const int64_t size = int64_t(sums.size() / 2);
  const float* x = batch.data<float>();
  for (int64_t i = 0; i < batch.num_elements(); ++i) {
    sums[size_t(i % size)] += x[i];
    sums[size_t(size + i % size)] += double(x[i]) * x[i];
  }
  count += double(batch.num_elements() / size);
}

void Normalization::set_adapted(const std::vector<double>& sums, double count) {
  check_argument(count > 0, "Normalization '" + name() + "': adapt() got no data");
  const size_t size = sums.size() / 2;
  float* mean = mean_->value().data<float>();
  float* variance = variance_->value().data<float>();
  for (size_t k = 0; k < size; ++k) {
    const double m = sums[k] / count;
    mean[k] = float(m);
    variance[k] = float(std::max(0.0, sums[size + k] / count - m * m));
  }
  mean_->round_to_dtype();  // bfloat16 under the bfloat16 policy, as Keras keeps them
  variance_->round_to_dtype();
}

void Normalization::adapt(const Tensor& samples) {
  check_argument(options_.mean.empty(), "Normalization '" + name() + "' was given its mean and variance: "
                                        "adapt() would replace them; create it without them to adapt");
  build(samples.shape(), global_random());
  std::vector<double> sums(size_t(2 * statistics_size(samples.shape())));
  double count = 0;
  accumulate(samples, sums, count);
  set_adapted(sums, count);
}

void Normalization::adapt(const data::Dataset& batches) {
  check_argument(options_.mean.empty(), "Normalization '" + name() + "' was given its mean and variance: "
                                        "adapt() would replace them; create it without them to adapt");
  std::vector<double> sums;
  double count = 0;
  std::unique_ptr<data::Iterator> iterator = batches.iterate();
  while (std::optional<data::Element> element = iterator->next()) {
    const Tensor& batch = element->at(0);
    check_argument(batch.dtype() == DType::float32, "Normalization '" + name() + "' adapts to float32 "
                                                    "data; map the dataset to float32 first");
    if (sums.empty()) {
      build(batch.shape(), global_random());
      sums.resize(size_t(2 * statistics_size(batch.shape())));
    }
    check_argument(statistics_size(batch.shape()) * 2 == int64_t(sums.size()),
                   "Normalization '" + name() + "': adapt() got batches of different feature counts (" +
                       batch.shape().to_string(true) + ")");
    accumulate(batch, sums, count);
  }
  set_adapted(sums, count);
}

nlohmann::json Normalization::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["axis"] = options_.axis ? nlohmann::json::array({*options_.axis}) : nlohmann::json(nullptr);
  config["invert"] = options_.invert;
  config["mean"] = statistics_config(options_.mean);
  config["variance"] = statistics_config(options_.variance);
  return config;
}

}  // namespace tenfold::layers
