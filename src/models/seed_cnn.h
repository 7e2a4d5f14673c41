#pragma once
// The recipe's model: Conv2D(32, 3, relu) -> MaxPooling2D -> Flatten -> Dense(128, relu) ->
// Dense(10, softmax) on 28x28x1 images; 693,962 parameters.
#include <memory>

#include "models/sequential.h"

namespace tenfold::models {

std::unique_ptr<Sequential> seed_cnn();

}  // namespace tenfold::models
