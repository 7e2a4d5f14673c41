#pragma once
// One call that checks a whole layer, as Keras' testing.TestCase.run_layer_test does: build,
// output shape, weight count, config round trip, and training steps inside a model.
#include <vector>

#include <nlohmann/json.hpp>

#include "core/shape.h"
#include "losses/loss.h"
#include "models/compiled_step.h"
#include "models/model.h"

namespace tenfold::testing {

/// float32, and bfloat16 where this CPU has bfloat16 units (elsewhere oneDNN has no bfloat16
/// kernels and the policies compute in float32).
std::vector<DType> compute_dtypes_here();

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

/// Compiles `model` (SGD, sparse categorical crossentropy over its `classes` outputs), runs one
/// training step on `x` (or random inputs in [-1, 1) of `batch` samples when empty) with random
/// labels, and checks every trainable weight's gradient against central differences (h 1e-3).
void expect_model_gradients_match_finite_differences(models::Model& model, int64_t batch, int64_t classes,
                                                     const Tensor& x = Tensor());

}  // namespace tenfold::testing
