#include "kernels/onednn/pooling.h"

#include <algorithm>

#include "core/error.h"

#include "kernels/tiling_pool.h"

namespace tenfold::kernels::onednn {

namespace {

bool padded(const WindowGeometry& g) { return g.pad_top + g.pad_left + g.pad_bottom + g.pad_right > 0; }

}  // namespace

PoolingKernel::PoolingKernel(PoolKind kind, const WindowGeometry& g, DType dtype)
    : PoolingKernel(kind, g, dtype, dtype) {}

PoolingKernel::PoolingKernel(PoolKind kind, const WindowGeometry& g, DType dtype, DType output_dtype)
    : geometry_(g),
      dtype_(dtype),
      output_dtype_(output_dtype),
      tiling_max_(kind == PoolKind::max && windows_tile(g)),
      tiling_average_(kind == PoolKind::average && windows_tile(g) && !padded(g)) {
  check_argument(tiling_max_ || dtype == output_dtype, "only tiling max pooling writes another dtype");
  if (tiling_max_) {
    workspace_bytes_ = size_t(g.batch * g.out_height * g.out_width * g.in_channels);  // argmax
    return;
  }
  if (tiling_average_) return;
  using tag = memory::format_tag;
  memory::desc src({g.batch, g.in_channels, g.in_height, g.in_width}, data_type_of(dtype), tag::nhwc);
  memory::desc dst({g.batch, g.in_channels, g.out_height, g.out_width}, data_type_of(dtype), tag::nhwc);
  // Without padding the two averages agree; include-padding's forward runs 3x faster.
  dnnl::algorithm algorithm = kind == PoolKind::max ? dnnl::algorithm::pooling_max
                              : padded(g)           ? dnnl::algorithm::pooling_avg_exclude_padding
                                                    : dnnl::algorithm::pooling_avg_include_padding;
  memory::dims strides = {g.stride_height, g.stride_width};
  memory::dims window = {g.window_height, g.window_width};
  memory::dims padding_left = {g.pad_top, g.pad_left};
  memory::dims padding_right = {g.pad_bottom, g.pad_right};
  dnnl::primitive_attr attr = user_scratchpad_attr();
  dnnl::pooling_forward::primitive_desc forward_pd(
      {dnnl::prop_kind::forward_training, algorithm, src, dst, strides, window, padding_left,
       padding_right},
      attr, engine());
  dnnl::pooling_backward::primitive_desc backward_pd(
      {algorithm, src, dst, strides, window, padding_left, padding_right}, attr, engine(),
      forward_pd);
  memory::desc workspace = forward_pd.workspace_desc();
  workspace_bytes_ = workspace.get_size();
  if (workspace_bytes_ > 0) {
    forward_ = BoundPrimitive(dnnl::pooling_forward(forward_pd), forward_pd,
        {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_WORKSPACE, workspace}});
    backward_ = BoundPrimitive(dnnl::pooling_backward(backward_pd), backward_pd,
        {{DNNL_ARG_DIFF_DST, dst}, {DNNL_ARG_DIFF_SRC, src}, {DNNL_ARG_WORKSPACE, workspace}});
  } else {
    forward_ = BoundPrimitive(dnnl::pooling_forward(forward_pd), forward_pd,
        {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    backward_ = BoundPrimitive(dnnl::pooling_backward(backward_pd), backward_pd,
        {{DNNL_ARG_DIFF_DST, dst}, {DNNL_ARG_DIFF_SRC, src}});
  }
  scratchpad_ = allocate_aligned(std::max(forward_.scratchpad_bytes(), backward_.scratchpad_bytes()));
}

void PoolingKernel::forward(const void* src, void* dst, void* workspace) {
  if (tiling_max_) {
    tiling_max_forward(geometry_, src, dtype_, dst, output_dtype_, static_cast<uint8_t*>(workspace));
  } else if (tiling_average_) {
    tiling_average_forward(geometry_, src, dst, dtype_);
  } else if (workspace_bytes_ > 0) {
    forward_.execute({src, dst, workspace}, scratchpad_.get());
  } else {
    forward_.execute({src, dst}, scratchpad_.get());
  }
}

void PoolingKernel::backward(const void* diff_dst, void* diff_src, const void* workspace) {
  if (tiling_max_) {
    tiling_max_backward(geometry_, diff_dst, output_dtype_, static_cast<const uint8_t*>(workspace), diff_src, dtype_);
  } else if (tiling_average_) {
    tiling_average_backward(geometry_, diff_dst, diff_src, dtype_);
  } else if (workspace_bytes_ > 0) {
    backward_.execute({diff_dst, diff_src, workspace}, scratchpad_.get());
  } else {
    backward_.execute({diff_dst, diff_src}, scratchpad_.get());
  }
}

std::vector<std::string> PoolingKernel::implementations() const {
  if (tiling_max_) return {"forward tenfold:tiling_max", "backward tenfold:tiling_max"};
  if (tiling_average_) return {"forward tenfold:tiling_average", "backward tenfold:tiling_average"};
  return {"forward " + forward_.implementation(), "backward " + backward_.implementation()};
}

}  // namespace tenfold::kernels::onednn
