#include "kernels/onednn/pooling.h"

#include <algorithm>

namespace tenfold::kernels::onednn {

PoolingKernel::PoolingKernel(PoolKind kind, const WindowGeometry& g)
    : geometry_(g),
      tiling_average_(kind == PoolKind::average && g.stride_height == g.window_height &&
                      g.stride_width == g.window_width &&
                      g.pad_top + g.pad_left + g.pad_bottom + g.pad_right == 0) {
  using tag = memory::format_tag;
  memory::desc src = f32_desc({g.batch, g.in_channels, g.in_height, g.in_width}, tag::nhwc);
  memory::desc dst = f32_desc({g.batch, g.in_channels, g.out_height, g.out_width}, tag::nhwc);
  const bool padded = g.pad_top + g.pad_left + g.pad_bottom + g.pad_right > 0;
  dnnl::algorithm algorithm = kind == PoolKind::max ? dnnl::algorithm::pooling_max
                              : padded              ? dnnl::algorithm::pooling_avg_exclude_padding
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

void PoolingKernel::forward(const float* src, float* dst, void* workspace) {
  if (workspace_bytes_ > 0) {
    forward_.execute({src, dst, workspace}, scratchpad_.get());
  } else {
    forward_.execute({src, dst}, scratchpad_.get());
  }
}

void PoolingKernel::backward(const float* diff_dst, float* diff_src, const void* workspace) {
  if (tiling_average_) {
    tiling_average_backward(diff_dst, diff_src);
    return;
  }
  if (workspace_bytes_ > 0) {
    backward_.execute({diff_dst, diff_src, workspace}, scratchpad_.get());
  } else {
    backward_.execute({diff_dst, diff_src}, scratchpad_.get());
  }
}

void PoolingKernel::tiling_average_backward(const float* diff_dst, float* diff_src) const {
  const WindowGeometry& g = geometry_;
  const int64_t channels = g.in_channels;
  const float scale = 1.0f / float(g.window_height * g.window_width);
  // Rows and columns past the last window (a 5-wide input under 2-wide windows) get zero.
  std::fill(diff_src, diff_src + g.batch * g.in_height * g.in_width * channels, 0.0f);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oh = 0; oh < g.out_height; ++oh) {
      for (int64_t ow = 0; ow < g.out_width; ++ow) {
        const float* gradient = diff_dst + ((n * g.out_height + oh) * g.out_width + ow) * channels;
        for (int64_t kh = 0; kh < g.window_height; ++kh) {
          float* pixel = diff_src + ((n * g.in_height + oh * g.stride_height + kh) * g.in_width +
                                     ow * g.stride_width) * channels;
          for (int64_t kw = 0; kw < g.window_width; ++kw, pixel += channels) {
            for (int64_t c = 0; c < channels; ++c) pixel[c] = gradient[c] * scale;
          }
        }
      }
    }
  }
}

std::vector<std::string> PoolingKernel::implementations() const {
  return {"forward " + forward_.implementation(),
          "backward " + (tiling_average_ ? std::string("tenfold:tiling_average")
                                         : backward_.implementation())};
}

}  // namespace tenfold::kernels::onednn
