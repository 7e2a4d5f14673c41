#pragma once
// Builds layers from Keras configs ({"class_name": ..., "config": {...}}), the inverse of
// get_config. Only known classes are built: anything else, Lambda included, is an error.
#include <memory>

#include <nlohmann/json.hpp>

#include "layers/layer.h"

namespace tenfold::layers {

std::shared_ptr<Layer> from_config(const nlohmann::json& layer);

}  // namespace tenfold::layers
