#pragma once
// keras.layers.Normalization (preprocessing): (x - mean) / sqrt(variance) per feature of the
// last axis (or one mean and variance for all, axis=None); invert=True undoes it. The mean and
// variance are either given (saved in the config) or adapted to data and then kept as
// non-trainable weights mean, variance and count, as Keras keeps them.
#include <optional>
#include <vector>

#include "data/dataset.h"
#include "layers/layer.h"

namespace tenfold::layers {

struct NormalizationOptions {
  /// The axis with one mean and variance per feature: the last, as -1 or as rank - 1;
  /// nullopt (Keras' axis=None) for one mean and variance over all values.
  std::optional<int64_t> axis = -1;
  /// Given statistics: one value for all features, or one per feature. Empty: weights, set
  /// by adapt() or loaded from a file.
  std::vector<double> mean, variance;
  bool invert = false;
  std::string name;
};

class Normalization : public Layer {
 public:
  explicit Normalization(const NormalizationOptions& options = {});
  std::string class_name() const override { return "Normalization"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

  /// Keras' adapt(): the mean and (biased) variance of `samples` ([N, ..., features]), or of
  /// the first component of every batch of `batches`. Builds the layer for their shape.
  void adapt(const Tensor& samples);
  void adapt(const data::Dataset& batches);

 protected:
  void build_weights(const Shape& input_shape, Random& random) override;

 private:
  /// Sums of x and x^2 per statistic over the values of `batch`, and how many values each.
  void accumulate(const Tensor& batch, std::vector<double>& sums, double& count) const;
  void set_adapted(const std::vector<double>& sums, double count);
  /// The statistics' length for inputs of `input_shape`: the features, or 1.
  int64_t statistics_size(const Shape& input_shape) const;

  NormalizationOptions options_;
  Variable* mean_ = nullptr;  // adapted statistics (no given mean)
  Variable* variance_ = nullptr;
};

}  // namespace tenfold::layers
