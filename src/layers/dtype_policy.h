#pragma once
// Keras' dtype policies: the dtype a layer keeps its variables in and the one it computes in.
// mixed_bfloat16 (the TPU's policy) computes in bfloat16 on float32 variables; bfloat16 keeps
// the variables in bfloat16 too (Keras then rounds after every operation of an update); float32
// is the default. Keras 3 writes a policy as a DTypePolicy object, Keras 2 as a string; both load.
#include <string>

#include <nlohmann/json.hpp>

#include "core/tensor.h"

namespace tenfold {

enum class DTypePolicy { float32, mixed_bfloat16, bfloat16 };

/// "float32", "mixed_bfloat16", "bfloat16".
std::string dtype_policy_name(DTypePolicy policy);
/// The dtype the layer's outputs and kernels use: bfloat16 under mixed_bfloat16 and bfloat16,
/// except on a CPU without bfloat16 units, where it is float32 (one warning says so).
DType compute_dtype(DTypePolicy policy);
/// The dtype the layer's variables (and their optimizer slots) hold: bfloat16 under bfloat16,
/// float32 otherwise (on any CPU: it is what the model computes, not how fast).
DType variable_dtype(DTypePolicy policy);
/// A policy named as Keras names it; any other name is an error saying what to use.
DTypePolicy dtype_policy_from_name(const std::string& name);
/// From a layer config's "dtype": a string or a Keras 3 DTypePolicy object; null is float32.
DTypePolicy dtype_policy_from_config(const nlohmann::json& dtype);
/// As Keras 3 writes a layer's "dtype".
nlohmann::json dtype_policy_config(DTypePolicy policy);

/// Keras' keras.mixed_precision.set_dtype_policy: the policy of layers made from now on
/// (layers in a loaded file keep theirs).
void set_dtype_policy(DTypePolicy policy);
DTypePolicy global_dtype_policy();

/// True when this CPU has bfloat16 dot-product units (AVX-512 BF16 or AMX); without them
/// oneDNN emulates bfloat16 slower than float32.
bool cpu_has_bfloat16_units();

}  // namespace tenfold
