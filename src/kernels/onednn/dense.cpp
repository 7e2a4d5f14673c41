#include "kernels/onednn/dense.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/bfloat16.h"
#include "kernels/column_sums.h"

namespace tenfold::kernels::onednn {

namespace {

using tag = memory::format_tag;

}  // namespace

DenseKernel::DenseKernel(int64_t rows, int64_t in, int64_t units, Activation activation,
                         bool use_bias, bool need_diff_src, DType dtype)
    : rows_(rows),
      units_(units),
      kernel_elements_(in * units),
      use_bias_(use_bias),
      dtype_(dtype),
      activation_(activation, rows, units, data_type_of(dtype)) {
  check_argument(fusable_as_post_op(activation), "Dense fuses only activations whose gradient follows from their output");
  const memory::data_type data_type = data_type_of(dtype);
  memory::desc src({rows, in}, data_type, tag::ab);
  memory::desc kernel({in, units}, data_type, tag::ab);
  memory::desc dst({rows, units}, data_type, tag::ab);
  if (dtype == DType::bfloat16) bfloat16_kernel_ = allocate_aligned(size_t(in * units) * sizeof(bfloat16));
  memory::desc bias = f32_desc({1, units}, tag::ab);
  dnnl::primitive_attr forward_attr = user_scratchpad_attr();
  forward_attr.set_post_ops(activation_post_ops(activation));
  auto forward_pd = use_bias
      ? dnnl::matmul::primitive_desc({src, kernel, bias, dst}, forward_attr, engine())
      : dnnl::matmul::primitive_desc({src, kernel, dst}, forward_attr, engine());
  std::vector<std::pair<int, memory::desc>> forward_args = {{DNNL_ARG_SRC, src},
                                                            {DNNL_ARG_WEIGHTS, kernel}};
  if (use_bias) forward_args.push_back({DNNL_ARG_BIAS, bias});
  forward_args.push_back({DNNL_ARG_DST, dst});
  forward_ = BoundPrimitive(dnnl::matmul(forward_pd), forward_pd, forward_args);

  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (need_diff_src) {
    // diff_src [rows, in] = diff_dst [rows, units] x kernel^T [units, in] (the kernel's memory
    // read transposed).
    memory::desc kernel_transposed({units, in}, data_type, tag::ba);
    dnnl::matmul::primitive_desc pd({dst, kernel_transposed, src}, attr, engine());
    backward_data_ = BoundPrimitive(
        dnnl::matmul(pd), pd,
        {{DNNL_ARG_SRC, dst}, {DNNL_ARG_WEIGHTS, kernel_transposed}, {DNNL_ARG_DST, src}});
  }
  // diff_kernel [in, units] = src^T [in, rows] x diff_dst [rows, units], in float32.
  memory::desc src_transposed({in, rows}, data_type, tag::ba);
  memory::desc diff_kernel = f32_desc({in, units}, tag::ab);
  dnnl::matmul::primitive_desc weights_pd({src_transposed, dst, diff_kernel}, attr, engine());
  backward_weights_ = BoundPrimitive(
      dnnl::matmul(weights_pd), weights_pd,
      {{DNNL_ARG_SRC, src_transposed}, {DNNL_ARG_WEIGHTS, dst}, {DNNL_ARG_DST, diff_kernel}});
  scratchpad_ = allocate_aligned(std::max({forward_.scratchpad_bytes(),
                                           backward_data_.scratchpad_bytes(),
                                           backward_weights_.scratchpad_bytes()}));
}

const void* DenseKernel::product_kernel(const float* kernel) const {
  return dtype_ == DType::bfloat16 ? static_cast<const void*>(bfloat16_kernel_.get()) : kernel;
}

void DenseKernel::forward(const void* src, const float* kernel, const float* bias, void* dst) {
  if (dtype_ == DType::bfloat16) {
    auto* copy = reinterpret_cast<bfloat16*>(bfloat16_kernel_.get());
    to_bfloat16(kernel, copy, kernel_elements_);
  }
  if (use_bias_) {
    forward_.execute({src, product_kernel(kernel), bias, dst}, scratchpad_.get());
  } else {
    forward_.execute({src, product_kernel(kernel), dst}, scratchpad_.get());
  }
}

void DenseKernel::backward(const void* src, const void* dst, void* diff_dst,
                           const float* kernel, void* diff_src, float* diff_kernel,
                           float* diff_bias) {
  activation_.backward(nullptr, dst, diff_dst, diff_dst);
  if (diff_src != nullptr) {
    check_argument(!backward_data_.empty(), "Dense kernel was built without input gradient");
    backward_data_.execute({diff_dst, product_kernel(kernel), diff_src}, scratchpad_.get());
  }
  backward_weights_.execute({src, diff_dst, diff_kernel}, scratchpad_.get());
  if (!use_bias_) return;
  if (dtype_ == DType::bfloat16) {
    column_sums(static_cast<const bfloat16*>(diff_dst), rows_, units_, diff_bias, false);
  } else {
    column_sums(static_cast<const float*>(diff_dst), rows_, units_, diff_bias, false);
  }
}

std::vector<std::string> DenseKernel::implementations() const {
  std::vector<std::string> names = {"forward " + forward_.implementation()};
  if (!backward_data_.empty()) names.push_back("backward-data " + backward_data_.implementation());
  names.push_back("backward-weights " + backward_weights_.implementation());
  return names;
}

}  // namespace tenfold::kernels::onednn
