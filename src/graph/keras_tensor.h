#pragma once
// A symbolic tensor of Keras' functional API: what calling a layer (or a model, as a layer) on
// tensors returns. It records the call that made it (the layer and the tensors it was called on);
// models::Functional walks these records back from the outputs to build the model's graph.
#include <memory>
#include <string>
#include <vector>

#include "core/shape.h"

namespace tenfold {

class Layer;
namespace layers {
class InputLayer;
}
namespace models {
class Model;
}

/// What a node of a model calls: a layer, or a model used as a layer (exactly one is set).
struct Caller {
  std::shared_ptr<Layer> layer;
  std::shared_ptr<const models::Model> model;

  const std::string& name() const;
  std::string class_name() const;
  /// The layers it holds: the layer itself, or the model's.
  std::vector<Layer*> layers() const;
  /// The layer or model object: the same for every call of a shared one.
  const void* identity() const;
};

class KerasTensor {
 public:
  /// The output of `layer` called on `inputs`, with samples of `sample_shape`.
  KerasTensor(std::shared_ptr<Layer> layer, std::vector<KerasTensor> inputs, Shape sample_shape);
  /// The output of `model`, used as a layer, called on `inputs`.
  KerasTensor(std::shared_ptr<const models::Model> model, std::vector<KerasTensor> inputs, Shape sample_shape);
  /// A model input: keras.Input(shape) (layers::Input) is one.
  KerasTensor(const std::shared_ptr<layers::InputLayer>& input);  // NOLINT: implicit, as in Keras

  /// Shape of one sample (no batch dimension).
  const Shape& shape() const { return call_->sample_shape; }
  /// The layer or model called.
  const Caller& caller() const { return call_->caller; }
  /// The tensors the layer was called on; none for a model input.
  const std::vector<KerasTensor>& inputs() const { return call_->inputs; }
  bool is_input() const { return call_->inputs.empty(); }
  /// The same for copies of one tensor, different for different tensors. A model input is
  /// its InputLayer's one output, however often the layer is converted to a tensor.
  const void* identity() const;

 private:
  struct Call {
    Caller caller;
    std::vector<KerasTensor> inputs;
    Shape sample_shape;
  };
  std::shared_ptr<const Call> call_;
};

}  // namespace tenfold
