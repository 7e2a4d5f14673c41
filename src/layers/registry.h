#pragma once
// Builds layers from Keras configs ({"class_name": ..., "config": {...}}), the inverse of
// get_config. Only known classes are built: anything else, Lambda included, is an error.
#include <memory>

#include <nlohmann/json.hpp>

#include "layers/layer.h"

namespace tenfold::layers {

std::shared_ptr<Layer> from_config(const nlohmann::json& layer);
/// True for the Keras ops on tensors that a Functional graph records for x + y and the like
/// (keras.src.ops.numpy Add, Subtract, Multiply, Maximum, Minimum): called on their tensors
/// as positional arguments, built as the merge layers of the same names.
bool is_tensor_op(const std::string& class_name);
/// {"class_name", "config"} and, for a class outside keras.layers, its "module" and
/// "registered_name", so that Keras finds it.
nlohmann::json to_config(const Layer& layer);

}  // namespace tenfold::layers
