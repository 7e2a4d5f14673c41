#pragma once
// keras.Model(inputs, outputs), the Functional model: any graph of layer calls, made with the
// functional API,
//
//   auto inputs = layers::Input({28, 28, 1});
//   auto conv = std::make_shared<layers::Conv2D>(...);
//   KerasTensor x = (*conv)(inputs);
//   ...
//   models::Functional model(inputs, outputs);
//
// or read from a Keras 3 or Keras 2 config.
#include <memory>
#include <string>
#include <vector>

#include "graph/keras_tensor.h"
#include "models/model.h"

namespace tenfold::models {

class Functional : public Model {
 public:
  /// The layers called on the way from `inputs` to `outputs`. Every input must lead to an
  /// output, and every output must come from the inputs.
  Functional(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs,
             const std::string& name = "");
  Functional(const KerasTensor& input, const KerasTensor& output, const std::string& name = "")
      : Functional(std::vector<KerasTensor>{input}, std::vector<KerasTensor>{output}, name) {}
  std::string class_name() const override { return "Functional"; }

  /// Keras 3's config: layers with their inbound_nodes, input_layers and output_layers.
  nlohmann::json to_config() const override;
  /// A built model from Keras' Functional config, Keras 3's (inbound_nodes of args and
  /// kwargs with __keras_tensor__ histories) or Keras 2's (nested lists).
  static std::unique_ptr<Functional> from_config(const nlohmann::json& config);

 private:
  explicit Functional(const std::string& name) : Model(name, "functional") {}
};

}  // namespace tenfold::models
