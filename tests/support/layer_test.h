#pragma once
// One call that checks a whole layer, as Keras' testing.TestCase.run_layer_test does: build,
// output shape, weight count, config round trip, and training steps inside a model.
#include <vector>

#include <nlohmann/json.hpp>

#include "core/shape.h"
#include "losses/loss.h"
#include "models/compiled_step.h"

namespace tenfold::testing {

/// `config` is {"class_name": ..., "config": {...}}; shapes include the batch dimension.
void run_layer_test(const nlohmann::json& config, const Shape& input_shape,
                    const Shape& expected_output_shape, int64_t expected_params);

/// After step.backward(loss, y, batch): each of `weights` (the step's weight_gradients(), in
/// order) against central differences (step `h`) of the mean loss, re-running forward with
/// `training` (a normalization's batch statistics need true); rtol 2e-2, atol 1e-3.
void expect_weight_gradients_match_finite_differences(models::CompiledStep& step,
                                                      const std::vector<Variable*>& weights,
                                                      const losses::Loss& loss, const Tensor& y,
                                                      bool training, double h);

}  // namespace tenfold::testing
