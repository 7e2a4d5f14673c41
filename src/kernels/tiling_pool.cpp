#include "kernels/tiling_pool.h"

#include <algorithm>
#include <cstring>

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

// The loops take float, or bfloat16 as its bits (kernels/bfloat16.h); the output may be of
// the other type (a float32 convolution pooled into a bfloat16 model).

template <typename To, typename From>
To converted(From value) {
  To result;
  assign(result, as_float(value));
  return result;
}

template <typename Source, typename Destination>
void max_forward(const WindowGeometry& g, const Source* src, Destination* dst, uint8_t* argmax) {
  const int64_t channels = g.in_channels;
  for_each_window_pixel(g, [&](int64_t out, int64_t in, uint8_t position, bool first) {
    Destination* __restrict best = dst + out * channels;
    uint8_t* __restrict where = argmax + out * channels;
    const Source* __restrict value = src + in * channels;
    if (first) {
      for (int64_t c = 0; c < channels; ++c) {
        best[c] = converted<Destination>(value[c]);
        where[c] = position;
      }
      return;
    }
    // Compared in the output's type: the first of values equal once rounded wins, as when the
    // convolution's output is rounded before pooling.
    for (int64_t c = 0; c < channels; ++c) {
      const Destination candidate = converted<Destination>(value[c]);
      const bool greater = as_float(candidate) > as_float(best[c]);
      best[c] = greater ? candidate : best[c];
      where[c] = greater ? position : where[c];
    }
  });
}

template <typename Gradient, typename Target>
void max_backward(const WindowGeometry& g, const Gradient* diff_dst, const uint8_t* argmax, Target* diff_src) {
  const int64_t channels = g.in_channels;
  zero_uncovered(g, diff_src);
  for_each_window_pixel(g, [&](int64_t out, int64_t in, uint8_t position, bool) {
    const Gradient* __restrict gradient = diff_dst + out * channels;
    const uint8_t* __restrict where = argmax + out * channels;
    Target* __restrict target = diff_src + in * channels;
    for (int64_t c = 0; c < channels; ++c) target[c] = where[c] == position ? converted<Target>(gradient[c]) : Target(0);
  });
}

/// Unpadded tiling windows: the first input row of a window row takes each output gradient
/// (scaled) window_width times over; its other input rows are copies of it. Row by row, not
/// pixel by pixel: LeNet's 512x28x28x6, 1 thread, 0.6 ms vs 2.5.
template <typename Value>
void average_backward(const WindowGeometry& g, const Value* diff_dst, Value* diff_src) {
  const int64_t channels = g.in_channels, window_width = g.window_width;
  const int64_t input_row = g.in_width * channels, covered_row = g.out_width * window_width * channels;
  const float scale = 1.0f / float(g.window_height * g.window_width);
  zero_uncovered(g, diff_src);
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oh = 0; oh < g.out_height; ++oh) {
      const Value* __restrict gradient = diff_dst + (n * g.out_height + oh) * g.out_width * channels;
      Value* __restrict target = diff_src + (n * g.in_height + oh * g.window_height) * input_row;
      for (int64_t ow = 0; ow < g.out_width; ++ow) {
        for (int64_t kw = 0; kw < window_width; ++kw) {
          Value* __restrict pixel = target + (ow * window_width + kw) * channels;
          for (int64_t c = 0; c < channels; ++c) assign(pixel[c], as_float(gradient[ow * channels + c]) * scale);
        }
      }
      for (int64_t kh = 1; kh < g.window_height; ++kh) {
        std::memcpy(target + kh * input_row, target, size_t(covered_row) * sizeof(Value));
      }
    }
  }
}

}  // namespace

void tiling_max_forward(const WindowGeometry& g, const void* src, DType src_dtype, void* dst, DType dst_dtype,
                        uint8_t* argmax) {
  with_element_type(src_dtype, [&](auto source) {
    with_element_type(dst_dtype, [&](auto destination) {
      max_forward(g, static_cast<const decltype(source)*>(src), static_cast<decltype(destination)*>(dst), argmax);
    });
  });
}

void tiling_max_backward(const WindowGeometry& g, const void* diff_dst, DType diff_dst_dtype, const uint8_t* argmax,
                         void* diff_src, DType diff_src_dtype) {
  with_element_type(diff_dst_dtype, [&](auto gradient) {
    with_element_type(diff_src_dtype, [&](auto target) {
      max_backward(g, static_cast<const decltype(gradient)*>(diff_dst), argmax, static_cast<decltype(target)*>(diff_src));
    });
  });
}

void tiling_average_backward(const WindowGeometry& g, const void* diff_dst, void* diff_src, DType dtype) {
  with_element_type(dtype, [&](auto element) {
    using Element = decltype(element);
    average_backward(g, static_cast<const Element*>(diff_dst), static_cast<Element*>(diff_src));
  });
}

}  // namespace tenfold::kernels
