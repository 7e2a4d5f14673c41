#include "kernels/bfloat16.h"

#include <cstring>

#include "core/error.h"

namespace tenfold::kernels {

void to_bfloat16(const float* from, bfloat16* to, int64_t count) {
  const float* __restrict in = from;
  auto* __restrict out = reinterpret_cast<uint16_t*>(to);
#pragma omp parallel for simd schedule(static) if (count > (1 << 16))
  for (int64_t i = 0; i < count; ++i) out[i] = bfloat16_bits(in[i]);
}

void to_float(const bfloat16* from, float* to, int64_t count) {
  const auto* __restrict in = reinterpret_cast<const uint16_t*>(from);
  float* __restrict out = to;
#pragma omp parallel for simd schedule(static) if (count > (1 << 16))
  for (int64_t i = 0; i < count; ++i) out[i] = float_from_bits(in[i]);
}

void round_to_bfloat16(const float* from, float* to, int64_t count) {
  const float* __restrict in = from;
  float* __restrict out = to;
#pragma omp parallel for simd schedule(static) if (count > (1 << 16))
  for (int64_t i = 0; i < count; ++i) out[i] = float_from_bits(bfloat16_bits(in[i]));
}

void convert(const Tensor& from, Tensor& to) {
  check_argument(from.num_elements() == to.num_elements(),
                 "cannot convert " + from.shape().to_string() + " into " + to.shape().to_string());
  const int64_t count = from.num_elements();
  if (from.dtype() == to.dtype()) {
    std::memcpy(to.raw_data(), from.raw_data(), from.num_bytes());
  } else if (from.dtype() == DType::float32 && to.dtype() == DType::bfloat16) {
    to_bfloat16(from.data<float>(), to.data<bfloat16>(), count);
  } else if (from.dtype() == DType::bfloat16 && to.dtype() == DType::float32) {
    to_float(from.data<bfloat16>(), to.data<float>(), count);
  } else {
    throw Error(ErrorCode::internal, std::string("no conversion from ") + dtype_name(from.dtype()) + " to " +
                                         dtype_name(to.dtype()));
  }
}

void add_into(const Tensor& from, Tensor& to) {
  check_argument(from.num_elements() == to.num_elements() && from.dtype() == to.dtype(),
                 "add_into needs tensors of one shape and dtype");
  const int64_t count = from.num_elements();
  with_element_type(to.dtype(), [&](auto element) {
    using Element = decltype(element);
    const Element* __restrict part = static_cast<const Element*>(from.raw_data());
    Element* __restrict sum = static_cast<Element*>(to.raw_data());
    for (int64_t i = 0; i < count; ++i) assign(sum[i], as_float(sum[i]) + as_float(part[i]));
  });
}

}  // namespace tenfold::kernels
