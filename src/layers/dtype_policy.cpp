#include "layers/dtype_policy.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/error.h"

namespace tenfold {

namespace {

std::atomic<DTypePolicy> global_policy{DTypePolicy::float32};

}  // namespace

std::string dtype_policy_name(DTypePolicy policy) {
  switch (policy) {
    case DTypePolicy::mixed_bfloat16: return "mixed_bfloat16";
    case DTypePolicy::bfloat16: return "bfloat16";
    case DTypePolicy::float32: break;
  }
  return "float32";
}

DType compute_dtype(DTypePolicy policy) {
  if (policy == DTypePolicy::float32) return DType::float32;
  static const bool has_units = cpu_has_bfloat16_units();
  if (!has_units) {
    static std::once_flag warned;
    std::call_once(warned, [] {
      std::fprintf(stderr, "WARNING: this CPU has no bfloat16 units (AVX-512 BF16 or AMX): the "
                           "mixed_bfloat16 and bfloat16 policies compute in float32 here\n");
    });
    return DType::float32;
  }
  return DType::bfloat16;
}

DType variable_dtype(DTypePolicy policy) {
  return policy == DTypePolicy::bfloat16 ? DType::bfloat16 : DType::float32;
}

DTypePolicy dtype_policy_from_name(const std::string& name) {
  if (name == "float32") return DTypePolicy::float32;
  if (name == "mixed_bfloat16") return DTypePolicy::mixed_bfloat16;
  if (name == "bfloat16") return DTypePolicy::bfloat16;
  if (name == "mixed_float16" || name == "float16") {
    throw Error(ErrorCode::invalid_argument,
                "dtype policy '" + name + "' is not supported on CPUs (no float16 units); use "
                "'mixed_bfloat16' (bfloat16 compute on the CPU's bfloat16 units) or 'float32'");
  }
  throw Error(ErrorCode::invalid_argument,
              "dtype policy '" + name + "' is not supported; Tenfold has 'float32', 'mixed_bfloat16' "
              "(float32 variables, bfloat16 compute) and 'bfloat16'");
}

DTypePolicy dtype_policy_from_config(const nlohmann::json& dtype) {
  if (dtype.is_null()) return DTypePolicy::float32;
  if (dtype.is_string()) return dtype_policy_from_name(dtype.get<std::string>());
  const bool policy_object = dtype.is_object() && dtype.value("class_name", "") == "DTypePolicy" &&
                             dtype.contains("config") && dtype.at("config").is_object() &&
                             dtype.at("config").contains("name") && dtype.at("config").at("name").is_string();
  check_argument(policy_object, "a dtype must be a policy name or a Keras DTypePolicy, got " + dtype.dump());
  return dtype_policy_from_name(dtype.at("config").at("name").get<std::string>());
}

nlohmann::json dtype_policy_config(DTypePolicy policy) {
  return {{"module", "keras"},
          {"class_name", "DTypePolicy"},
          {"config", {{"name", dtype_policy_name(policy)}}},
          {"registered_name", nullptr}};
}

void set_dtype_policy(DTypePolicy policy) { global_policy = policy; }

DTypePolicy global_dtype_policy() { return global_policy; }

bool cpu_has_bfloat16_units() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

}  // namespace tenfold
