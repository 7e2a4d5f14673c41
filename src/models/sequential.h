#pragma once
// keras.Sequential: a stack of layers, each reading the one before.
#include <memory>
#include <string>
#include <vector>

#include "models/model.h"

namespace tenfold::models {

class Sequential : public Model {
 public:
  explicit Sequential(std::vector<std::shared_ptr<Layer>> layers = {}, const std::string& name = "");
  std::string class_name() const override { return "Sequential"; }

  /// Appends a layer; an InputLayer only declares the input shape (and builds the model).
  void add(std::shared_ptr<Layer> layer);
  /// Builds every layer for samples of `sample_shape` (no batch dimension).
  void build(const Shape& sample_shape);

  nlohmann::json to_config() const override;
  /// A built model from Keras' Sequential config (Keras 3 or 2).
  static std::unique_ptr<Sequential> from_config(const nlohmann::json& config);

 private:
  /// The stack as a graph: input -> layer 1 -> ... -> layer n.
  void rebuild_graph();

  std::vector<std::shared_ptr<Layer>> stack_;
  std::optional<Shape> sample_shape_;
};

}  // namespace tenfold::models
