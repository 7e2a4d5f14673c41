#include "kernels/conv_max_pool.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/error.h"
#include "kernels/bfloat16.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/threads.h"
#include "kernels/vectors.h"

namespace tenfold::kernels {

namespace {

using vectors::as_destination;
using vectors::Bytes;
using vectors::Floats;
using vectors::Ints;
using vectors::keep_greater;
using vectors::lanes;
using vectors::load;
using vectors::load_floats;
using vectors::store;

constexpr int64_t max_in_channels = 4;

// Filters go two vectors at a time (a window's 8 sums in flight keep both FMA units busy), and
// a last one alone.
constexpr int max_vectors = 2;

/// Taps whose weight-gradient sums stay in registers for V vectors of filters: the sums, the
/// window's gradient at each of its 4 pixels per vector and an input in AVX-512's 32 registers
/// (9 for two vectors: the recipe's 3x3 kernel in one block).
constexpr int tap_block(int V) { return (26 - 4 * V) / V; }
constexpr int64_t max_tap_block = tap_block(1);

/// run(std::integral_constant<int, V>{}) for the filters from some f0, `remaining` of them: two
/// vectors, or one for a last 16.
template <typename Run>
void with_vector_count(int64_t remaining, Run run) {
  if (remaining >= max_vectors * lanes) {
    run(std::integral_constant<int, max_vectors>{});
  } else {
    run(std::integral_constant<int, 1>{});
  }
}

/// A pooling window's four convolution pixels (row by row, as argmax counts them), from the
/// top-left one's input element: `right` and `down` elements apart.
struct WindowPixels {
  WindowPixels(const float* corner, int64_t right, int64_t down)
      : at{corner, corner + right, corner + down, corner + down + right} {}
  const float* at[4];
};

/// The window's pooled output and argmax for filters [16 v, 16 v + 16), v < V, from `weights`
/// ([taps] rows `filters` apart) and `bias`: the maximum of the 4 pixels' sums (compared as
/// Element holds them), then relu's max(x, `floor`) (0, or -infinity for no activation; NaN
/// stays). relu once on the maximum equals relu on each pixel first; only the argmax of a window
/// whose 4 values are all <= 0 differs, and there relu's gradient is 0.
template <int V, typename Element>
void pool_window(const WindowPixels& pixels, const int64_t* offsets, int64_t taps, const float* weights,
                 int64_t filters, const float* bias, float floor, Element* dst, uint8_t* argmax) {
  Floats sums[4][V];
  for (int v = 0; v < V; ++v) {
    const Floats b = load(bias + v * lanes);
    for (int p = 0; p < 4; ++p) sums[p][v] = b;
  }
  for (int64_t t = 0; t < taps; ++t) {
    Floats w[V];
    for (int v = 0; v < V; ++v) w[v] = load(weights + t * filters + v * lanes);
    for (int p = 0; p < 4; ++p) {
      const float x = pixels.at[p][offsets[t]];  // broadcast by the product
      for (int v = 0; v < V; ++v) sums[p][v] += x * w[v];
    }
  }
  for (int v = 0; v < V; ++v) {
    Floats best = as_destination<Element>(sums[0][v]);
    Bytes where{};
    for (int p = 1; p < 4; ++p) keep_greater(as_destination<Element>(sums[p][v]), int8_t(p), best, where);
    vectors::store_exact(dst + v * lanes, best < floor ? Floats{} + floor : best);
    store(argmax + v * lanes, where);
  }
}

/// Pooled gradients and where they go, for one image and filters [16 v, 16 v + 16) from f0.
template <typename Element>
struct PooledGradients {
  const Element* dst;
  const Element* diff_dst;
  const uint8_t* argmax;
  bool relu_before;
  int64_t filters;

  /// Window `out`'s gradient through the activation (relu's derivative at the maximum, from the
  /// pooled output), and the same at each of the window's 4 pixels: there at its argmax, else 0.
  template <int V>
  void route(int64_t out, Floats (&gradient)[V], Floats (&routed)[4][V]) const {
    for (int v = 0; v < V; ++v) {
      const int64_t at = out + v * lanes;
      gradient[v] = load_floats(diff_dst + at);
      if (relu_before) gradient[v] = load_floats(dst + at) > 0 ? gradient[v] : Floats{};
      const Bytes where = load<Bytes>(argmax + at);
      for (int p = 0; p < 4; ++p) {
        routed[p][v] = __builtin_convertvector(where == int8_t(p), Ints) ? gradient[v] : Floats{};
      }
    }
  }
};

}  // namespace

bool ConvMaxPoolKernel::handles(const WindowGeometry& conv, const WindowGeometry& pool, const Activation& activation,
                                bool need_diff_src) {
  const bool plain_relu = activation.kind == Activation::relu && activation.alpha == 0 && std::isinf(activation.max_value);
  return !need_diff_src && (plain_relu || activation.kind == Activation::linear) && conv.in_channels <= max_in_channels &&
         conv.out_channels % lanes == 0 && conv.stride_height == 1 && conv.stride_width == 1 &&
         conv.dilation_height == 1 && conv.dilation_width == 1 && conv.groups == 1 && pool.window_height == 2 &&
         pool.window_width == 2 && pool.stride_height == 2 && pool.stride_width == 2 && pool.pad_top == 0 &&
         pool.pad_left == 0 && 2 * pool.out_height <= conv.out_height && 2 * pool.out_width <= conv.out_width;
}

ConvMaxPoolKernel::ConvMaxPoolKernel(const WindowGeometry& conv, const WindowGeometry& pool,
                                     const Activation& activation, bool use_bias,
                                     const onednn::memory::desc& stored_weights, DType dtype)
    : conv_(conv),
      pool_(pool),
      dtype_(dtype),
      use_bias_(use_bias),
      relu_(activation.kind == Activation::relu),
      padded_width_(conv.out_width + conv.window_width - 1),
      padded_rows_(conv.out_height + conv.window_height - 1),
      taps_(conv.window_height * conv.window_width * conv.in_channels),
      keras_weights_(stored_weights, onednn::Conv2DKernel::keras_weights_desc(conv), dtype == DType::bfloat16),
      keras_gradients_(size_t(taps_ * conv.out_channels)),
      bias_gradients_(size_t(conv.out_channels)),
      zero_bias_(size_t(conv.out_channels), 0.0f) {
  check_argument(handles(conv, pool, activation, false), "this Conv2D + MaxPooling2D pair is not one ConvMaxPoolKernel computes");
  // Tap (ky, kx, c) is tap (ky * KW + kx) * C + c, as Keras orders the kernel; the backward's
  // last block of taps reads tap 0's input into sums nobody reads.
  tap_offsets_.assign(size_t(taps_ + max_tap_block), 0);
  for (int64_t ky = 0; ky < conv.window_height; ++ky) {
    for (int64_t kx = 0; kx < conv.window_width; ++kx) {
      for (int64_t c = 0; c < conv.in_channels; ++c) {
        tap_offsets_[size_t((ky * conv.window_width + kx) * conv.in_channels + c)] =
            (ky * padded_width_ + kx) * conv.in_channels + c;
      }
    }
  }
  const onednn::memory::desc keras_desc = onednn::Conv2DKernel::keras_weights_desc(conv);
  if (stored_weights != keras_desc) {
    dnnl::reorder::primitive_desc pd(onednn::engine(), keras_desc, onednn::engine(), stored_weights);
    gradients_to_stored_ = onednn::BoundPrimitive(dnnl::reorder(pd), pd,
                                                  {{DNNL_ARG_FROM, keras_desc}, {DNNL_ARG_TO, stored_weights}});
  }
}

const float* ConvMaxPoolKernel::padded_image(const float* src, int64_t n, std::vector<float>& padded) const {
  const WindowGeometry& g = conv_;
  const int64_t channels = g.in_channels, row = g.in_width * channels;
  const float* image = src + n * g.in_height * row;
  if (g.pad_top == 0 && g.pad_left == 0 && padded_width_ == g.in_width && padded_rows_ <= g.in_height) return image;
  padded.resize(size_t(padded_rows_ * padded_width_ * channels));  // zeros the first time: the border stays so
  const int64_t rows = std::min(g.in_height, padded_rows_ - g.pad_top);
  const int64_t columns = std::min(g.in_width, padded_width_ - g.pad_left);
  for (int64_t iy = 0; iy < rows; ++iy) {
    std::copy(image + iy * row, image + iy * row + columns * channels,
              padded.data() + ((iy + g.pad_top) * padded_width_ + g.pad_left) * channels);
  }
  return padded.data();
}

void ConvMaxPoolKernel::forward(const float* src, const float* weights, const float* bias, void* dst,
                                uint8_t* argmax) {
  const float* keras = static_cast<const float*>(keras_weights_(weights));
  const float* used_bias = use_bias_ ? bias : zero_bias_.data();
  with_element_type(dtype_, [&](auto element) {
    using Element = decltype(element);
    forward_in(src, keras, used_bias, static_cast<Element*>(dst), argmax);
  });
}

template <typename Element>
void ConvMaxPoolKernel::forward_in(const float* src, const float* weights, const float* bias, Element* dst,
                                   uint8_t* argmax) {
  const int64_t filters = conv_.out_channels, right = conv_.in_channels, down = padded_width_ * right;
  const float floor = relu_ ? 0.0f : -std::numeric_limits<float>::infinity();
#pragma omp parallel
  {
    std::vector<float> padded;
#pragma omp for schedule(static)
    for (int64_t n = 0; n < conv_.batch; ++n) {
      const float* image = padded_image(src, n, padded);
      for (int64_t py = 0; py < pool_.out_height; ++py) {
        for (int64_t px = 0; px < pool_.out_width; ++px) {
          const WindowPixels pixels(image + 2 * py * down + 2 * px * right, right, down);
          const int64_t out = ((n * pool_.out_height + py) * pool_.out_width + px) * filters;
          for (int64_t f0 = 0; f0 < filters; f0 += max_vectors * lanes) {
            with_vector_count(filters - f0, [&](auto vectors) {
              pool_window<decltype(vectors)::value>(pixels, tap_offsets_.data(), taps_, weights + f0, filters,
                                                    bias + f0, floor, dst + out + f0, argmax + out + f0);
            });
          }
        }
      }
    }
  }
}

void ConvMaxPoolKernel::backward_weights(const float* src, const void* dst, const void* diff_dst,
                                         const uint8_t* argmax, float* diff_weights, float* diff_bias) {
  with_element_type(dtype_, [&](auto element) {
    using Element = decltype(element);
    backward_in(src, static_cast<const Element*>(dst), static_cast<const Element*>(diff_dst), argmax);
  });
  if (gradients_to_stored_.empty()) {
    std::copy(keras_gradients_.begin(), keras_gradients_.end(), diff_weights);
  } else {
    gradients_to_stored_.execute({keras_gradients_.data(), diff_weights}, nullptr);
  }
  if (use_bias_ && diff_bias != nullptr) std::copy(bias_gradients_.begin(), bias_gradients_.end(), diff_bias);
}

template <typename Element>
void ConvMaxPoolKernel::backward_in(const float* src, const Element* dst, const Element* diff_dst,
                                    const uint8_t* argmax) {
  const int64_t filters = conv_.out_channels, vectors_per_tap = filters / lanes;
  const int64_t right = conv_.in_channels, down = padded_width_ * right;
  const int64_t image_outputs = pool_.out_height * pool_.out_width * filters;
  // Per thread: the sums [taps + a block][filters / 16], then the bias's [filters / 16].
  const int64_t sums_per_thread = (taps_ + max_tap_block + 1) * vectors_per_tap;
  const int threads = max_threads();
  std::vector<Floats> sums(size_t(threads * sums_per_thread), Floats{});
#pragma omp parallel num_threads(threads)
  {
    Floats* own = sums.data() + thread_number() * sums_per_thread;
    Floats* own_bias = own + (taps_ + max_tap_block) * vectors_per_tap;
    std::vector<float> padded;
#pragma omp for schedule(static)
    for (int64_t n = 0; n < conv_.batch; ++n) {
      const float* image = padded_image(src, n, padded);
      const PooledGradients<Element> gradients{dst + n * image_outputs, diff_dst + n * image_outputs,
                                               argmax + n * image_outputs, relu_, filters};
      for (int64_t f0 = 0; f0 < filters; f0 += max_vectors * lanes) {
        // The sums of taps [t0, t0 + TB) x filters [f0, f0 + 16 V) in registers across the image.
        with_vector_count(filters - f0, [&](auto vectors) {
          constexpr int V = decltype(vectors)::value, TB = tap_block(V);
          for (int64_t t0 = 0; t0 < taps_; t0 += TB) {
            Floats block[TB][V] = {}, bias_block[V] = {};
            for (int64_t py = 0; py < pool_.out_height; ++py) {
              for (int64_t px = 0; px < pool_.out_width; ++px) {
                const WindowPixels pixels(image + 2 * py * down + 2 * px * right, right, down);
                Floats gradient[V], routed[4][V];
                gradients.template route<V>((py * pool_.out_width + px) * filters + f0, gradient, routed);
                for (int v = 0; v < V; ++v) bias_block[v] += gradient[v];
                // Unrolled, so the block's sums stay in registers (GCC kept them in memory).
#pragma GCC unroll 32
                for (int t = 0; t < TB; ++t) {
                  for (int p = 0; p < 4; ++p) {
                    const float x = pixels.at[p][tap_offsets_[size_t(t0 + t)]];
                    for (int v = 0; v < V; ++v) block[t][v] += x * routed[p][v];
                  }
                }
              }
            }
            for (int t = 0; t < TB; ++t) {
              for (int v = 0; v < V; ++v) own[(t0 + t) * vectors_per_tap + f0 / lanes + v] += block[t][v];
            }
            if (t0 == 0) {
              for (int v = 0; v < V; ++v) own_bias[f0 / lanes + v] += bias_block[v];
            }
          }
        });
      }
    }
  }
  // The threads' sums in thread order, so a run's gradients do not depend on timing.
  std::fill(keras_gradients_.begin(), keras_gradients_.end(), 0.0f);
  std::fill(bias_gradients_.begin(), bias_gradients_.end(), 0.0f);
  for (int thread = 0; thread < threads; ++thread) {
    const Floats* own = sums.data() + thread * sums_per_thread;
    for (int64_t i = 0; i < taps_ * vectors_per_tap; ++i) {
      float* to = keras_gradients_.data() + i * lanes;
      store(to, load(to) + own[i]);
    }
    const Floats* own_bias = own + (taps_ + max_tap_block) * vectors_per_tap;
    for (int64_t v = 0; v < vectors_per_tap; ++v) {
      float* to = bias_gradients_.data() + v * lanes;
      store(to, load(to) + own_bias[v]);
    }
  }
}

}  // namespace tenfold::kernels
