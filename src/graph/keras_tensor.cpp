#include "graph/keras_tensor.h"

#include "layers/input.h"
#include "models/model.h"

namespace tenfold {

KerasTensor::KerasTensor(std::shared_ptr<Layer> layer, std::vector<KerasTensor> inputs,
                         Shape sample_shape)
    : call_(std::make_shared<const Call>(Call{std::move(layer), nullptr, std::move(inputs), std::move(sample_shape)})) {}

KerasTensor::KerasTensor(std::shared_ptr<const models::Model> model, std::vector<KerasTensor> inputs,
                         Shape sample_shape)
    : call_(std::make_shared<const Call>(Call{nullptr, std::move(model), std::move(inputs), std::move(sample_shape)})) {}

KerasTensor::KerasTensor(const std::shared_ptr<layers::InputLayer>& input)
    : KerasTensor(input, {}, input->sample_shape()) {}

const std::string& KerasTensor::caller_name() const {
  return call_->layer ? call_->layer->name() : call_->model->name();
}

const void* KerasTensor::identity() const {
  return is_input() ? static_cast<const void*>(call_->layer.get()) : call_.get();
}

}  // namespace tenfold
