#pragma once
// One call that checks a whole layer, as Keras' testing.TestCase.run_layer_test does: build,
// output shape, weight count, config round trip, and training steps inside a model.
#include <nlohmann/json.hpp>

#include "core/shape.h"

namespace tenfold::testing {

/// `config` is {"class_name": ..., "config": {...}}; shapes include the batch dimension.
void run_layer_test(const nlohmann::json& config, const Shape& input_shape,
                    const Shape& expected_output_shape, int64_t expected_params);

}  // namespace tenfold::testing
