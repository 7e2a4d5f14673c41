#include "kernels/tiling_pool.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/bfloat16.h"
#include "kernels/vectors.h"

namespace tenfold::kernels {

namespace {

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

// Channels go a vector at a time (vectors::lanes: 16 on AVX-512, 8 on AVX2; float32 or bfloat16
// widened), the rest one by one. NOTE: GCC's own vectorization of per-pixel channel loops ran
// 2-4x slower (512x28x28x16, 1 thread: max forward 9.4 ms, now 6.1; backward 13.5, now
// 5.4-6.8): once inlined it checks the pointers for overlap and takes 4 lanes, or 32 and the
// scalar rest. Bfloat16 one by one
// made the recipe's fused Conv2D+MaxPooling2D forward 1.6x its float32 time.
using vectors::as_destination;
using vectors::Bytes;
using vectors::Floats;
using vectors::Ints;
using vectors::keep_greater;
using vectors::lanes;
using vectors::load;
using vectors::load_floats;
using vectors::store;
using vectors::store_floats;
using vectors::store_positions;

/// The channels the loops below take one by one: those past the last full vector.
int64_t scalar_start(int64_t channels) { return channels / lanes * lanes; }

/// A window's part inside the image: its rows [first_row, end_row) and columns [first_column,
/// end_column); its pixel (0, 0) is input element `corner` (channel 0; negative in padding).
struct Window {
  /// The input element of channel 0 of the window's pixel (kh, kw).
  int64_t element(const WindowGeometry& g, int64_t kh, int64_t kw) const {
    return corner + (kh * g.in_width + kw) * g.in_channels;
  }

  int64_t corner, first_row, end_row, first_column, end_column;
};

/// Calls visit(out, window) for every output pixel, `out` the index of its channel 0; images
/// in parallel (an image's windows read and write only that image's pixels).
template <typename Visit>
void for_each_window(const WindowGeometry& g, Visit visit) {
  const int64_t channels = g.in_channels;
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oh = 0; oh < g.out_height; ++oh) {
      const int64_t top = oh * g.stride_height - g.pad_top;
      const int64_t first_row = std::max<int64_t>(0, -top), end_row = std::min(g.window_height, g.in_height - top);
      for (int64_t ow = 0; ow < g.out_width; ++ow) {
        const int64_t left = ow * g.stride_width - g.pad_left;
        const Window window{((n * g.in_height + top) * g.in_width + left) * channels, first_row, end_row,
                            std::max<int64_t>(0, -left), std::min(g.window_width, g.in_width - left)};
        visit(((n * g.out_height + oh) * g.out_width + ow) * channels, window);
      }
    }
  }
}

/// The maximum of channels [c, c + lanes) over `window` of `src`, and its position: pixels count
/// row by row (padding included, as argmax's do); the first of equal values wins.
template <typename Destination, typename Source>
void window_max(const WindowGeometry& g, const Source* src, const Window& window, int64_t c, Floats& best,
                Ints& where) {
  auto at = [&](int64_t kh, int64_t kw) { return src + (window.element(g, kh, kw) + c); };
  best = as_destination<Destination>(load_floats(at(window.first_row, window.first_column)));
  where = Ints{} + int32_t(window.first_row * g.window_width + window.first_column);
  for (int64_t kh = window.first_row; kh < window.end_row; ++kh) {
    for (int64_t kw = kh == window.first_row ? window.first_column + 1 : window.first_column; kw < window.end_column;
         ++kw) {
      keep_greater(as_destination<Destination>(load_floats(at(kh, kw))), int32_t(kh * g.window_width + kw), best, where);
    }
  }
}

/// Whether every window is 2x2, at stride 2, inside the image: the common case, which the
/// loops below unroll.
bool whole_2x2_windows(const WindowGeometry& g) {
  return g.window_height == 2 && g.window_width == 2 && g.stride_height == 2 && g.stride_width == 2 &&
         g.pad_top == 0 && g.pad_left == 0 && 2 * g.out_height <= g.in_height && 2 * g.out_width <= g.in_width;
}

/// max_forward_in_vectors for 2x2 windows at stride 2 all inside the image, the common case,
/// with the window unrolled: the general loop spent more time on the window's bounds than on
/// the maxima (the recipe's fused step's pooling, 1 thread: 577 -> 319 perf samples in float32,
/// 965 -> 698 into bfloat16).
template <typename Source, typename Destination>
void max_forward_2x2(const WindowGeometry& g, const Source* src, Destination* dst, uint8_t* argmax, int64_t full) {
  const int64_t channels = g.in_channels, input_row = g.in_width * channels;
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oh = 0; oh < g.out_height; ++oh) {
      const Source* top = src + (n * g.in_height + 2 * oh) * input_row;
      const int64_t out_row = (n * g.out_height + oh) * g.out_width * channels;
      for (int64_t ow = 0; ow < g.out_width; ++ow) {
        for (int64_t c = 0; c < full; c += lanes) {
          const Source* window = top + 2 * ow * channels + c;
          Floats best = as_destination<Destination>(load_floats(window));
          Ints where{};
          keep_greater(as_destination<Destination>(load_floats(window + channels)), 1, best, where);
          keep_greater(as_destination<Destination>(load_floats(window + input_row)), 2, best, where);
          keep_greater(as_destination<Destination>(load_floats(window + input_row + channels)), 3, best, where);
          store_floats(dst + out_row + ow * channels + c, best);
          store_positions(argmax + out_row + ow * channels + c, where);
        }
      }
    }
  }
}

/// Max pooling of channels [0, full), a multiple of lanes, for every output pixel: per vector of
/// channels the maximum and its position stay in registers across the window, stored once.
template <typename Source, typename Destination>
void max_forward_in_vectors(const WindowGeometry& g, const Source* src, Destination* dst, uint8_t* argmax,
                            int64_t full) {
  if (whole_2x2_windows(g)) {
    max_forward_2x2(g, src, dst, argmax, full);
    return;
  }
  for_each_window(g, [&](int64_t out, const Window& window) {
    for (int64_t c = 0; c < full; c += lanes) {
      Floats best;
      Ints where;
      window_max<Destination>(g, src, window, c, best, where);
      store_floats(dst + out + c, best);
      store_positions(argmax + out + c, where);
    }
  });
}

/// best = value, where = position for channels [begin, channels): a window's first pixel.
template <typename Source, typename Destination>
void take_first(const Source* value, uint8_t position, Destination* best, uint8_t* where, int64_t begin,
                int64_t channels) {
  for (int64_t c = begin; c < channels; ++c) {
    best[c] = converted<Destination>(value[c]);
    where[c] = position;
  }
}

/// best and where take value and position where value is greater, for channels [begin,
/// channels). Compared in the output's type: the first of values equal once rounded wins, as
/// when the convolution's output is rounded before pooling.
template <typename Source, typename Destination>
void take_greater(const Source* value, uint8_t position, Destination* best, uint8_t* where, int64_t begin,
                  int64_t channels) {
  for (int64_t c = begin; c < channels; ++c) {
    const Destination candidate = converted<Destination>(value[c]);
    const bool greater = as_float(candidate) > as_float(best[c]);
    best[c] = greater ? candidate : best[c];
    where[c] = greater ? position : where[c];
  }
}

/// Each pixel of `window` takes the window's gradient where its maximum was there, else 0.
/// Each vector of gradients and positions is loaded once for the whole window.
template <typename Gradient, typename Target>
void route_window(const WindowGeometry& g, const Gradient* gradient, const uint8_t* where, const Window& window,
                  Target* diff_src) {
  const int64_t channels = g.in_channels, rest = scalar_start(channels);
  auto at = [&](int64_t kh, int64_t kw) { return diff_src + window.element(g, kh, kw); };
  for (int64_t c = 0; c < rest; c += lanes) {
    const Floats value = load_floats(gradient + c);
    const Bytes positions = load<Bytes>(where + c);
    for (int64_t kh = window.first_row; kh < window.end_row; ++kh) {
      for (int64_t kw = window.first_column; kw < window.end_column; ++kw) {
        const Ints here = __builtin_convertvector(positions == int8_t(kh * g.window_width + kw), Ints);
        store_floats(at(kh, kw) + c, here ? value : Floats{});
      }
    }
  }
  for (int64_t kh = window.first_row; kh < window.end_row; ++kh) {
    for (int64_t kw = window.first_column; kw < window.end_column; ++kw) {
      const uint8_t position = uint8_t(kh * g.window_width + kw);
      for (int64_t c = rest; c < channels; ++c) {
        at(kh, kw)[c] = where[c] == position ? converted<Target>(gradient[c]) : Target(0);
      }
    }
  }
}

template <typename Source, typename Destination>
void max_forward(const WindowGeometry& g, const Source* src, Destination* dst, uint8_t* argmax) {
  const int64_t channels = g.in_channels;
  const int64_t begin = scalar_start(channels);
  if (begin > 0) max_forward_in_vectors(g, src, dst, argmax, begin);
  if (begin == channels) return;
  for_each_window(g, [&](int64_t out, const Window& window) {
    for (int64_t kh = window.first_row; kh < window.end_row; ++kh) {
      for (int64_t kw = window.first_column; kw < window.end_column; ++kw) {
        const Source* value = src + window.element(g, kh, kw);
        const uint8_t position = uint8_t(kh * g.window_width + kw);
        if (kh == window.first_row && kw == window.first_column) {
          take_first(value, position, dst + out, argmax + out, begin, channels);
        } else {
          take_greater(value, position, dst + out, argmax + out, begin, channels);
        }
      }
    }
  });
}

/// max_backward for 2x2 windows at stride 2 all inside the image, unrolled as max_forward_2x2
/// (the recipe's fused step's pooling backward, 1 thread: 579 -> 433 perf samples in float32,
/// 576 -> 298 from bfloat16).
template <typename Gradient, typename Target>
void max_backward_2x2(const WindowGeometry& g, const Gradient* diff_dst, const uint8_t* argmax, Target* diff_src) {
  const int64_t channels = g.in_channels, input_row = g.in_width * channels, rest = scalar_start(channels);
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oh = 0; oh < g.out_height; ++oh) {
      Target* top = diff_src + (n * g.in_height + 2 * oh) * input_row;
      const int64_t out_row = (n * g.out_height + oh) * g.out_width * channels;
      for (int64_t ow = 0; ow < g.out_width; ++ow) {
        const int64_t out = out_row + ow * channels;
        Target* const pixels[] = {top + 2 * ow * channels, top + (2 * ow + 1) * channels,
                                  top + input_row + 2 * ow * channels, top + input_row + (2 * ow + 1) * channels};
        for (int64_t c = 0; c < rest; c += lanes) {
          const Floats value = load_floats(diff_dst + out + c);
          const Bytes where = load<Bytes>(argmax + out + c);
          for (int8_t position = 0; position < 4; ++position) {
            const Ints here = __builtin_convertvector(where == position, Ints);
            store_floats(pixels[position] + c, here ? value : Floats{});
          }
        }
        for (int64_t c = rest; c < channels; ++c) {
          for (uint8_t position = 0; position < 4; ++position) {
            pixels[position][c] = argmax[out + c] == position ? converted<Target>(diff_dst[out + c]) : Target(0);
          }
        }
      }
    }
  }
}

template <typename Gradient, typename Target>
void max_backward(const WindowGeometry& g, const Gradient* diff_dst, const uint8_t* argmax, Target* diff_src) {
  zero_uncovered(g, diff_src);
  if (whole_2x2_windows(g)) {
    max_backward_2x2(g, diff_dst, argmax, diff_src);
    return;
  }
  for_each_window(g, [&](int64_t out, const Window& window) {
    route_window(g, diff_dst + out, argmax + out, window, diff_src);
  });
}

/// Unpadded tiling windows: each output pixel sums its window a vector of channels at a time in
/// float32 registers and scales once. Channels past a multiple of lanes (LeNet's 6) go in a
/// vector too:
/// its load reads the next pixel's channels and its store writes them, which that pixel, next
/// in this thread, writes over; only where the load would pass the input's end or the store
/// the image's do the last channels go one by one. (Summing one value at a time ran 4x
/// oneDNN's float32 time, a chain of dependent scalar adds; oneDNN's bfloat16 average pooling
/// 2.7x its float32 time, LeNet's 512x28x28x6, 1 thread: 2.7 ms vs 1.0.)
template <typename Value>
void average_forward(const WindowGeometry& g, const Value* src, Value* dst) {
  const int64_t channels = g.in_channels, input_row = g.in_width * channels;
  const int64_t input_end = g.batch * g.in_height * input_row, image_output = g.out_height * g.out_width * channels;
  const int64_t last_pixel = (g.window_height - 1) * input_row + (g.window_width - 1) * channels;
  const float scale = 1.0f / float(g.window_height * g.window_width);
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < g.batch; ++n) {
    Value* image = dst + n * image_output;
    for (int64_t oh = 0; oh < g.out_height; ++oh) {
      for (int64_t ow = 0; ow < g.out_width; ++ow) {
        const int64_t window = (n * g.in_height + oh * g.window_height) * input_row + ow * g.window_width * channels;
        const int64_t out = (oh * g.out_width + ow) * channels;  // within image n
        for (int64_t c = 0; c < channels; c += lanes) {
          if (window + last_pixel + c + lanes <= input_end && out + c + lanes <= image_output) {
            Floats sum{};
            for (int64_t kh = 0; kh < g.window_height; ++kh) {
              for (int64_t kw = 0; kw < g.window_width; ++kw) sum += load_floats(src + window + kh * input_row + kw * channels + c);
            }
            store_floats(image + out + c, sum * scale);
            continue;
          }
          for (int64_t k = c; k < std::min(channels, c + lanes); ++k) {
            float sum = 0;
            for (int64_t kh = 0; kh < g.window_height; ++kh) {
              for (int64_t kw = 0; kw < g.window_width; ++kw) sum += as_float(src[window + kh * input_row + kw * channels + k]);
            }
            assign(image[out + k], sum * scale);
          }
        }
      }
    }
  }
}

/// Unpadded tiling windows: the first input row of a window row takes each output gradient
/// (scaled) window_width times over; its other input rows are copies of it. Row by row, not
/// pixel by pixel: LeNet's 512x28x28x6, 1 thread, 0.6 ms vs 2.5. The row is built in float32
/// a vector at a time, as average_forward (a vector per pixel, writing into the next pixel,
/// which comes next), then stored in one run (bfloat16 one value at a time had made this 2.4x
/// its float32 time).
template <typename Value>
void average_backward(const WindowGeometry& g, const Value* diff_dst, Value* diff_src) {
  const int64_t channels = g.in_channels, window_width = g.window_width;
  const int64_t input_row = g.in_width * channels, covered_row = g.out_width * window_width * channels;
  const int64_t gradient_row = g.out_width * channels;
  const float scale = 1.0f / float(g.window_height * g.window_width);
  zero_uncovered(g, diff_src);
#pragma omp parallel
  {
    // A gradient row and a covered row in float32, a vector longer for the last pixel's.
    std::vector<float> gradients(size_t(gradient_row + lanes), 0.0f), row(size_t(covered_row + lanes));
#pragma omp for schedule(static)
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t oh = 0; oh < g.out_height; ++oh) {
        const Value* gradient = diff_dst + (n * g.out_height + oh) * gradient_row;
        Value* target = diff_src + (n * g.in_height + oh * g.window_height) * input_row;
        for (int64_t i = 0; i < gradient_row; ++i) gradients[size_t(i)] = as_float(gradient[i]) * scale;
        for (int64_t ow = 0; ow < g.out_width; ++ow) {
          for (int64_t kw = 0; kw < window_width; ++kw) {
            float* pixel = row.data() + (ow * window_width + kw) * channels;
            for (int64_t c = 0; c < channels; c += lanes) store(pixel + c, load(gradients.data() + ow * channels + c));
          }
        }
        int64_t i = 0;
        for (; i + lanes <= covered_row; i += lanes) store_floats(target + i, load(row.data() + i));
        for (; i < covered_row; ++i) assign(target[i], row[size_t(i)]);
        for (int64_t kh = 1; kh < g.window_height; ++kh) {
          std::memcpy(target + kh * input_row, target, size_t(covered_row) * sizeof(Value));
        }
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

void tiling_average_forward(const WindowGeometry& g, const void* src, void* dst, DType dtype) {
  with_element_type(dtype, [&](auto element) {
    using Element = decltype(element);
    average_forward(g, static_cast<const Element*>(src), static_cast<Element*>(dst));
  });
}

void tiling_average_backward(const WindowGeometry& g, const void* diff_dst, void* diff_src, DType dtype) {
  with_element_type(dtype, [&](auto element) {
    using Element = decltype(element);
    average_backward(g, static_cast<const Element*>(diff_dst), static_cast<Element*>(diff_src));
  });
}

}  // namespace tenfold::kernels
