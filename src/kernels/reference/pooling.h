#pragma once
// Plain C++ max and average pooling over NHWC (the test oracle). Average pooling divides by the
// number of window positions inside the image, as TensorFlow does with padding='same'.
#include <limits>

#include "kernels/window.h"

namespace tenfold::kernels::reference {

enum class PoolKind { max, average };

template <typename T, typename Visit>
void for_each_window(const WindowGeometry& g, Visit visit) {
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_height; ++oh)
      for (int64_t ow = 0; ow < g.out_width; ++ow) {
        int64_t h0 = oh * g.stride_height - g.pad_top, w0 = ow * g.stride_width - g.pad_left;
        int64_t h_begin = h0 < 0 ? 0 : h0, w_begin = w0 < 0 ? 0 : w0;
        int64_t h_end = h0 + g.window_height > g.in_height ? g.in_height : h0 + g.window_height;
        int64_t w_end = w0 + g.window_width > g.in_width ? g.in_width : w0 + g.window_width;
        for (int64_t c = 0; c < g.in_channels; ++c) {
          int64_t out_index = ((n * g.out_height + oh) * g.out_width + ow) * g.in_channels + c;
          visit(out_index, [&](auto each_input) {
            for (int64_t ih = h_begin; ih < h_end; ++ih)
              for (int64_t iw = w_begin; iw < w_end; ++iw)
                each_input(((n * g.in_height + ih) * g.in_width + iw) * g.in_channels + c);
          }, (h_end - h_begin) * (w_end - w_begin));
        }
      }
}

/// src [N,H,W,C] -> dst [N,OH,OW,C]
template <typename T>
void pool_forward(PoolKind kind, const WindowGeometry& g, const T* src, T* dst) {
  for_each_window<T>(g, [&](int64_t out, auto inputs, int64_t count) {
    T result = kind == PoolKind::max ? -std::numeric_limits<T>::infinity() : T(0);
    inputs([&](int64_t in) {
      result = kind == PoolKind::max ? (src[in] > result ? src[in] : result) : result + src[in];
    });
    dst[out] = kind == PoolKind::max ? result : result / T(count);
  });
}

/// Gradient with respect to src (overwritten). Max pooling routes each gradient to the first
/// maximum of its window.
template <typename T>
void pool_backward(PoolKind kind, const WindowGeometry& g, const T* src, const T* diff_dst,
                   T* diff_src) {
  for (int64_t i = 0; i < g.batch * g.in_height * g.in_width * g.in_channels; ++i) diff_src[i] = 0;
  for_each_window<T>(g, [&](int64_t out, auto inputs, int64_t count) {
    if (kind == PoolKind::average) {
      inputs([&](int64_t in) { diff_src[in] += diff_dst[out] / T(count); });
      return;
    }
    int64_t argmax = -1;
    inputs([&](int64_t in) {
      if (argmax < 0 || src[in] > src[argmax]) argmax = in;
    });
    if (argmax >= 0) diff_src[argmax] += diff_dst[out];
  });
}

}  // namespace tenfold::kernels::reference
