#include "graph/keras_tensor.h"

#include "layers/input.h"
#include "models/model.h"

namespace tenfold {

KerasTensor::KerasTensor(std::shared_ptr<Layer> layer, std::vector<KerasTensor> inputs,
                         Shape sample_shape)
    : call_(std::make_shared<const Call>(Call{{std::move(layer), nullptr}, std::move(inputs), std::move(sample_shape)})) {}

KerasTensor::KerasTensor(std::shared_ptr<const models::Model> model, std::vector<KerasTensor> inputs,
                         Shape sample_shape)
    : call_(std::make_shared<const Call>(Call{{nullptr, std::move(model)}, std::move(inputs), std::move(sample_shape)})) {}

KerasTensor::KerasTensor(const std::shared_ptr<layers::InputLayer>& input)
    : KerasTensor(input, {}, input->sample_shape()) {}

const std::string& Caller::name() const { return layer ? layer->name() : model->name(); }

std::string Caller::class_name() const { return layer ? layer->class_name() : model->class_name(); }

std::vector<Layer*> Caller::layers() const { return layer ? std::vector<Layer*>{layer.get()} : model->layers(); }

const void* Caller::identity() const {
  return layer ? static_cast<const void*>(layer.get()) : static_cast<const void*>(model.get());
}

const void* KerasTensor::identity() const { return is_input() ? caller().identity() : call_.get(); }

}  // namespace tenfold
