#include "kernels/onednn/dense.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "core/error.h"
#include "kernels/bfloat16.h"
#include "kernels/column_sums.h"
#include "kernels/timing.h"

namespace tenfold::kernels::onednn {

namespace {

using tag = memory::format_tag;

/// [rows, cols] row by row, `stride` elements from one row's start to the next's.
memory::desc rows_desc(int64_t rows, int64_t cols, int64_t stride, memory::data_type type) {
  if (stride == cols) return memory::desc({rows, cols}, type, tag::ab);
  return memory::desc({rows, cols}, type, {stride, 1});
}

/// Whether rows of `cols` elements start at addresses equal in their low 10 bits (dense.h).
bool rows_alias(int64_t cols, DType dtype) { return cols * int64_t(dtype_size(dtype)) % 1024 == 0; }

/// The stride of rows of `cols` elements padded by one cache line.
int64_t padded_stride(int64_t cols, DType dtype) { return cols + 64 / int64_t(dtype_size(dtype)); }

/// `rows` rows of `row_bytes` from `from` (one after another) to `to`, `to_stride` bytes apart.
void copy_rows(const void* from, int64_t rows, size_t row_bytes, std::byte* to, size_t to_stride) {
  for (int64_t row = 0; row < rows; ++row) {
    std::memcpy(to + size_t(row) * to_stride, static_cast<const std::byte*>(from) + size_t(row) * row_bytes, row_bytes);
  }
}

}  // namespace

size_t DenseKernel::Products::scratchpad_bytes() const {
  return std::max({forward.scratchpad_bytes(), backward_data.scratchpad_bytes(), backward_weights.scratchpad_bytes()});
}

DenseKernel::DenseKernel(int64_t rows, int64_t in, int64_t units, Activation activation,
                         bool use_bias, bool need_diff_src, DType dtype, RowPadding padding)
    : rows_(rows),
      in_(in),
      units_(units),
      fused_activation_(activation),
      use_bias_(use_bias),
      need_diff_src_(need_diff_src),
      dtype_(dtype),
      activation_(activation, rows, units, data_type_of(dtype)) {
  check_argument(fusable_as_post_op(activation), "Dense fuses only activations whose gradient follows from their output");
  const RowStrides plain = {units, in, units};
  if (padding == RowPadding::padded) {
    products_ = products({padded_stride(units, dtype), padded_stride(in, dtype), padded_stride(units, dtype)});
  } else if (padding == RowPadding::none || dtype != DType::float32 ||
             !(rows_alias(units, dtype) || rows_alias(in, dtype))) {
    // bfloat16: its products were never measured slow on aliasing rows (the AVX2 CPU that
    // showed it has no bfloat16 units), so they are not given a layout never tested there.
    products_ = products(plain);
  } else {
    // Each operand whose rows alias padded, against all plain.
    auto padded_if_aliasing = [&](int64_t cols) {
      return rows_alias(cols, dtype) ? padded_stride(cols, dtype) : cols;
    };
    const RowStrides padded = {padded_if_aliasing(units), padded_if_aliasing(in), padded_if_aliasing(units)};
    // Both forms are built for the first timing only: a kernel of a shape already decided
    // (another replica's) builds just its own products.
    std::optional<std::pair<Products, Products>> timed;  // plain, padded
    auto padded_clearly_faster = [&](Timed what) {
      if (!timed) timed.emplace(products(plain), products(padded));
      return clearly_faster(timed->second, timed->first, what);
    };
    const std::vector<int64_t> shape = {rows, in, units, int64_t(dtype), need_diff_src};
    const bool kernel_padded = padded.kernel != units && decided_once("Dense kernel rows padded", shape, [&] {
      return padded_clearly_faster(Timed::forward_and_backward_data);
    });
    const bool weight_gradient_operands_padded = decided_once("Dense weight gradient rows padded", shape, [&] {
      return padded_clearly_faster(Timed::backward_weights);
    });
    products_ = products({kernel_padded ? padded.kernel : units, weight_gradient_operands_padded ? padded.src : in,
                          weight_gradient_operands_padded ? padded.diff_dst : units});
  }
  scratchpad_ = allocate_aligned(products_.scratchpad_bytes());
}

DenseKernel::Products DenseKernel::products(RowStrides strides) const {
  const memory::data_type type = data_type_of(dtype_);
  Products p;
  p.strides = strides;
  const memory::desc src = rows_desc(rows_, in_, in_, type), dst = rows_desc(rows_, units_, units_, type);
  const memory::desc kernel = rows_desc(in_, units_, strides.kernel, type);
  p.kernel = WeightsForPrimitive(f32_desc({in_, units_}, tag::ab), kernel);

  const memory::desc bias = f32_desc({1, units_}, tag::ab);
  dnnl::primitive_attr forward_attr = user_scratchpad_attr();
  forward_attr.set_post_ops(activation_post_ops(fused_activation_));
  auto forward_pd = use_bias_ ? dnnl::matmul::primitive_desc({src, kernel, bias, dst}, forward_attr, engine())
                              : dnnl::matmul::primitive_desc({src, kernel, dst}, forward_attr, engine());
  std::vector<std::pair<int, memory::desc>> forward_args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, kernel}};
  if (use_bias_) forward_args.push_back({DNNL_ARG_BIAS, bias});
  forward_args.push_back({DNNL_ARG_DST, dst});
  p.forward = BoundPrimitive(dnnl::matmul(forward_pd), forward_pd, forward_args);

  const dnnl::primitive_attr attr = user_scratchpad_attr();
  if (need_diff_src_) {
    // diff_src [rows, in] = diff_dst [rows, units] x kernel^T [units, in] (the kernel's memory
    // read transposed).
    const memory::desc kernel_transposed({units_, in_}, type, {1, strides.kernel});
    dnnl::matmul::primitive_desc pd({dst, kernel_transposed, src}, attr, engine());
    p.backward_data = BoundPrimitive(
        dnnl::matmul(pd), pd, {{DNNL_ARG_SRC, dst}, {DNNL_ARG_WEIGHTS, kernel_transposed}, {DNNL_ARG_DST, src}});
  }
  // diff_kernel [in, units] = src^T [in, rows] x diff_dst [rows, units], in float32.
  const memory::desc src_transposed({in_, rows_}, type, {1, strides.src});
  const memory::desc diff_dst = rows_desc(rows_, units_, strides.diff_dst, type);
  const memory::desc diff_kernel = f32_desc({in_, units_}, tag::ab);
  dnnl::matmul::primitive_desc weights_pd({src_transposed, diff_dst, diff_kernel}, attr, engine());
  p.backward_weights = BoundPrimitive(
      dnnl::matmul(weights_pd), weights_pd,
      {{DNNL_ARG_SRC, src_transposed}, {DNNL_ARG_WEIGHTS, diff_dst}, {DNNL_ARG_DST, diff_kernel}});
  if (strides.src != in_) p.padded_src = allocate_aligned(rows_desc(rows_, in_, strides.src, type).get_size());
  if (strides.diff_dst != units_) p.padded_diff_dst = allocate_aligned(diff_dst.get_size());
  return p;
}

bool DenseKernel::clearly_faster(Products& padded, Products& plain, Timed timed) const {
  const size_t element = dtype_size(dtype_);
  // allocate_aligned zeroes.
  auto src = allocate_aligned(size_t(rows_ * in_) * element), dst = allocate_aligned(size_t(rows_ * units_) * element);
  auto diff_src = allocate_aligned(size_t(rows_ * in_) * element);
  auto weights = allocate_aligned(size_t(in_ * units_) * sizeof(float));
  auto bias = allocate_aligned(size_t(units_) * sizeof(float));
  auto scratchpad = allocate_aligned(std::max(padded.scratchpad_bytes(), plain.scratchpad_bytes()));
  auto* kernel_values = reinterpret_cast<float*>(weights.get());
  auto run = [&](Products& p) {
    if (timed == Timed::forward_and_backward_data) {
      run_forward(p, src.get(), kernel_values, reinterpret_cast<float*>(bias.get()), dst.get(), scratchpad.get());
      if (need_diff_src_) p.backward_data.execute({dst.get(), p.kernel(kernel_values, true), diff_src.get()}, scratchpad.get());
    } else {
      run_backward_weights(p, src.get(), dst.get(), kernel_values, scratchpad.get());
    }
  };
  const std::vector<double> seconds = best_seconds_in_turns({[&] { run(padded); }, [&] { run(plain); }}, 3);
  // Both compute alike; a clear win only, so that noise does not change the choice run to run.
  return seconds[0] < 0.9 * seconds[1];
}

void DenseKernel::run_forward(Products& p, const void* src, const float* kernel, const float* bias, void* dst,
                              void* scratchpad) const {
  if (use_bias_) {
    p.forward.execute({src, p.kernel(kernel), bias, dst}, scratchpad);
  } else {
    p.forward.execute({src, p.kernel(kernel), dst}, scratchpad);
  }
}

void DenseKernel::run_backward_weights(Products& p, const void* src, const void* diff_dst, float* diff_kernel,
                                       void* scratchpad) const {
  const size_t element = dtype_size(dtype_);
  if (p.padded_src) {
    copy_rows(src, rows_, size_t(in_) * element, p.padded_src.get(), size_t(p.strides.src) * element);
    src = p.padded_src.get();
  }
  if (p.padded_diff_dst) {
    copy_rows(diff_dst, rows_, size_t(units_) * element, p.padded_diff_dst.get(), size_t(p.strides.diff_dst) * element);
    diff_dst = p.padded_diff_dst.get();
  }
  p.backward_weights.execute({src, diff_dst, diff_kernel}, scratchpad);
}

void DenseKernel::forward(const void* src, const float* kernel, const float* bias, void* dst) {
  run_forward(products_, src, kernel, bias, dst, scratchpad_.get());
}

void DenseKernel::backward(const void* src, const void* dst, void* diff_dst,
                           const float* kernel, void* diff_src, float* diff_kernel,
                           float* diff_bias) {
  activation_.backward(nullptr, dst, diff_dst, diff_dst);
  if (diff_src != nullptr) {
    check_argument(!products_.backward_data.empty(), "Dense kernel was built without input gradient");
    // The kernel as forward handed it to its product (copied when padded or in bfloat16).
    products_.backward_data.execute({diff_dst, products_.kernel(kernel, true), diff_src}, scratchpad_.get());
  }
  run_backward_weights(products_, src, diff_dst, diff_kernel, scratchpad_.get());
  if (!use_bias_) return;
  if (dtype_ == DType::bfloat16) {
    column_sums(static_cast<const bfloat16*>(diff_dst), rows_, units_, diff_bias, false);
  } else {
    column_sums(static_cast<const float*>(diff_dst), rows_, units_, diff_bias, false);
  }
}

std::vector<std::string> DenseKernel::implementations() const {
  const RowStrides& strides = products_.strides;
  const std::string kernel_rows = strides.kernel != units_ ? " (kernel rows padded)" : "";
  std::vector<std::string> names = {"forward " + products_.forward.implementation() + kernel_rows};
  if (!products_.backward_data.empty()) {
    names.push_back("backward-data " + products_.backward_data.implementation() + kernel_rows);
  }
  std::string padded_rows;
  if (strides.src != in_) padded_rows += " src";
  if (strides.diff_dst != units_) padded_rows += std::string(padded_rows.empty() ? "" : " and") + " diff_dst";
  names.push_back("backward-weights " + products_.backward_weights.implementation() +
                  (padded_rows.empty() ? "" : " (" + padded_rows.substr(1) + " rows padded)"));
  return names;
}

}  // namespace tenfold::kernels::onednn
