#include "kernels/tiling_pool.h"

#include <algorithm>

#include "kernels/bfloat16.h"

namespace tenfold::kernels {

namespace {

/// Calls visit(output_pixel, input_pixel, position, first) for every input pixel of every
/// window, pixels as indices into [N*OH*OW] and [N*H*W], padding skipped; `first` for the
/// first pixel of a window.
template <typename Visit>
void for_each_window_pixel(const WindowGeometry& g, Visit visit) {
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_height; ++oh)
      for (int64_t ow = 0; ow < g.out_width; ++ow) {
        const int64_t out = (n * g.out_height + oh) * g.out_width + ow;
        bool first = true;
        for (int64_t kh = 0; kh < g.window_height; ++kh) {
          const int64_t ih = oh * g.stride_height + kh - g.pad_top;
          if (ih < 0 || ih >= g.in_height) continue;
          for (int64_t kw = 0; kw < g.window_width; ++kw) {
            const int64_t iw = ow * g.stride_width + kw - g.pad_left;
            if (iw < 0 || iw >= g.in_width) continue;
            visit(out, (n * g.in_height + ih) * g.in_width + iw, uint8_t(kh * g.window_width + kw), first);
            first = false;
          }
        }
      }
}

/// Zeroes diff_src when some input rows or columns lie in no window (a 5-wide input under
/// 2-wide valid windows): the loops below write only the pixels windows cover.
template <typename Value>
void zero_uncovered(const WindowGeometry& g, Value* diff_src) {
  const bool covered = g.out_height * g.stride_height - g.pad_top >= g.in_height &&
                       g.out_width * g.stride_width - g.pad_left >= g.in_width;
  if (!covered) std::fill(diff_src, diff_src + g.batch * g.in_height * g.in_width * g.in_channels, Value(0));
}

}  // namespace

bool windows_tile(const WindowGeometry& g) {
  return g.stride_height == g.window_height && g.stride_width == g.window_width &&
         g.window_height * g.window_width <= 256;
}

namespace {

// The loops take float, or bfloat16 as its bits (kernels/bfloat16.h).

template <typename Value>
void max_forward(const WindowGeometry& g, const Value* src, Value* dst, uint8_t* argmax) {
  const int64_t channels = g.in_channels;
  for_each_window_pixel(g, [&](int64_t out, int64_t in, uint8_t position, bool first) {
    Value* __restrict best = dst + out * channels;
    uint8_t* __restrict where = argmax + out * channels;
    const Value* __restrict value = src + in * channels;
    if (first) {
      for (int64_t c = 0; c < channels; ++c) {
        best[c] = value[c];
        where[c] = position;
      }
      return;
    }
    for (int64_t c = 0; c < channels; ++c) {
      const bool greater = as_float(value[c]) > as_float(best[c]);
      best[c] = greater ? value[c] : best[c];
      where[c] = greater ? position : where[c];
    }
  });
}

template <typename Value>
void max_backward(const WindowGeometry& g, const Value* diff_dst, const uint8_t* argmax, Value* diff_src) {
  const int64_t channels = g.in_channels;
  zero_uncovered(g, diff_src);
  for_each_window_pixel(g, [&](int64_t out, int64_t in, uint8_t position, bool) {
    const Value* __restrict gradient = diff_dst + out * channels;
    const uint8_t* __restrict where = argmax + out * channels;
    Value* __restrict target = diff_src + in * channels;
    for (int64_t c = 0; c < channels; ++c) target[c] = where[c] == position ? gradient[c] : Value(0);
  });
}

const uint16_t* bits(const bfloat16* values) { return reinterpret_cast<const uint16_t*>(values); }
uint16_t* bits(bfloat16* values) { return reinterpret_cast<uint16_t*>(values); }

}  // namespace

void tiling_max_forward(const WindowGeometry& g, const float* src, float* dst, uint8_t* argmax) {
  max_forward(g, src, dst, argmax);
}

void tiling_max_forward(const WindowGeometry& g, const bfloat16* src, bfloat16* dst, uint8_t* argmax) {
  max_forward(g, bits(src), bits(dst), argmax);
}

void tiling_max_backward(const WindowGeometry& g, const float* diff_dst, const uint8_t* argmax,
                         float* diff_src) {
  max_backward(g, diff_dst, argmax, diff_src);
}

void tiling_max_backward(const WindowGeometry& g, const bfloat16* diff_dst, const uint8_t* argmax,
                         bfloat16* diff_src) {
  max_backward(g, bits(diff_dst), argmax, bits(diff_src));
}

namespace {

template <typename Value>
void average_backward(const WindowGeometry& g, const Value* diff_dst, Value* diff_src) {
  const int64_t channels = g.in_channels;
  const float scale = 1.0f / float(g.window_height * g.window_width);
  zero_uncovered(g, diff_src);
  for_each_window_pixel(g, [&](int64_t out, int64_t in, uint8_t, bool) {
    const Value* __restrict gradient = diff_dst + out * channels;
    Value* __restrict target = diff_src + in * channels;
    for (int64_t c = 0; c < channels; ++c) assign(target[c], as_float(gradient[c]) * scale);
  });
}

}  // namespace

void tiling_average_backward(const WindowGeometry& g, const float* diff_dst, float* diff_src) {
  average_backward(g, diff_dst, diff_src);
}

void tiling_average_backward(const WindowGeometry& g, const bfloat16* diff_dst, bfloat16* diff_src) {
  average_backward(g, bits(diff_dst), bits(diff_src));
}

}  // namespace tenfold::kernels
