#pragma once
// keras.layers.LayerNormalization over the last axis: each sample's features normalised with
// their own mean and variance, then scaled by gamma and shifted by beta (Keras' weight order);
// GroupNormalization: each sample's channels split into groups, each group normalised over
// all positions together. Unlike BatchNormalization they have no state and behave the same in
// training and inference.
#include "layers/layer.h"

namespace tenfold::layers {

struct LayerNormalizationOptions {
  /// The normalised axis: the last, as -1 or as rank - 1.
  int64_t axis = -1;
  double epsilon = 1e-3;
  bool center = true;
  bool scale = true;
  Initializer beta_initializer = "zeros";
  Initializer gamma_initializer = "ones";
  std::string name;
};

class LayerNormalization : public Layer {
 public:
  explicit LayerNormalization(const LayerNormalizationOptions& options = {});
  std::string class_name() const override { return "LayerNormalization"; }
  /// The normalised data seen as kernels::GroupNormKernel sees it.
  struct Groups {
    int64_t samples, positions, channels, groups;
  };
  virtual Groups groups_of(const Shape& input_shape) const;
  Shape compute_output_shape(const Shape& input_shape) const override;
  std::unique_ptr<LayerStep> compile(const Shape& input_shape, const CompileOptions& options) override;
  nlohmann::json get_config() const override;

 protected:
  LayerNormalization(const LayerNormalizationOptions& options, const std::string& snake_name);
  void build_weights(const Shape& input_shape, Random& random) override;
  const LayerNormalizationOptions& options() const { return options_; }

 private:
  LayerNormalizationOptions options_;
  Variable* gamma_ = nullptr;
  Variable* beta_ = nullptr;
};

/// Keras' GroupNormalization over the last axis: `groups` groups of channels (-1: one per
/// channel, instance normalization), each sample's group normalised over its positions and
/// channels together.
class GroupNormalization : public LayerNormalization {
 public:
  explicit GroupNormalization(int64_t groups = 32, const LayerNormalizationOptions& options = {});
  std::string class_name() const override { return "GroupNormalization"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  Groups groups_of(const Shape& input_shape) const override;
  nlohmann::json get_config() const override;

 private:
  int64_t groups_;
};

}  // namespace tenfold::layers
