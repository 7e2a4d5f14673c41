#include "kernels/direct_conv.h"

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

// Filters go two vectors at a time, and a last one alone. Forward, a unit is 8 / V pixels of a
// row, or a pooling window's 4: 8 sums in flight keep both FMA units busy (4, for a 1 -> 16
// layer, waited on the FMAs' latency: slower than the few-channel kernel).
constexpr int max_vectors = 2;
constexpr int sums_in_flight = 8;
constexpr int row_unit(int V) { return sums_in_flight / V; }
constexpr int window_pixels = 4;

// Backward, the sums are all the taps (at most 9: handles()) x V vectors, 9 in flight, the
// unit 4 pixels of a row: with 8 pixels and 19 taps their addresses needed more general
// registers than there are, and spilled (2x slower). On AVX2 two vectors' 18 sums spill out
// of its 16 registers, yet one vector at a time, each image read 4 times, ran slower still
// (the recipe's pooled 1 -> 32 3x3 backward, 1 thread: 2.1 -> 3.3 ms).
constexpr int gradient_taps = 9;
constexpr int backward_row_unit = 4;
static_assert(backward_row_unit == window_pixels, "backward's units are rows or windows alike");

/// run(std::integral_constant<int, V>{}) for the filters from some f0, `remaining` of them: two
/// vectors, or one for a last vector's worth.
template <typename Run>
void with_vector_count(int64_t remaining, Run run) {
  if (remaining >= max_vectors * lanes) {
    run(std::integral_constant<int, max_vectors>{});
  } else {
    run(std::integral_constant<int, 1>{});
  }
}

/// A unit's P output pixels' first input elements (tap 0) in the padded image.
template <int P>
struct UnitPixels {
  UnitPixels(const float* first, const int64_t* offsets) {
    for (int p = 0; p < P; ++p) at[p] = first + offsets[p];
  }
  const float* at[P];
};

template <int P, int V>
struct UnitSums {
  Floats at[P][V];
};

/// The convolution at the unit's pixels for filters [lanes v, lanes (v + 1)), v < V, from `weights`
/// ([taps] rows `filters` apart) and `bias`. (Inlined and returned by value, the sums stay in
/// registers: written through a pointer GCC stored them at every tap.)
template <int P, int V>
[[gnu::always_inline]] inline UnitSums<P, V> convolve_unit(const UnitPixels<P>& pixels, const int64_t* offsets,
                                                           int64_t taps, const float* weights, int64_t filters,
                                                           const float* bias) {
  UnitSums<P, V> sums;
  for (int v = 0; v < V; ++v) {
    const Floats b = load(bias + v * lanes);
    for (int p = 0; p < P; ++p) sums.at[p][v] = b;
  }
  for (int64_t t = 0; t < taps; ++t) {
    Floats w[V];
    for (int v = 0; v < V; ++v) w[v] = load(weights + t * filters + v * lanes);
    for (int p = 0; p < P; ++p) {
      const float x = pixels.at[p][offsets[t]];  // broadcast by the product
      for (int v = 0; v < V; ++v) sums.at[p][v] += x * w[v];
    }
  }
  return sums;
}

/// relu's max(x, `floor`) (0, or -infinity for no activation); NaN stays.
Floats activated(Floats x, float floor) { return x < floor ? Floats{} + floor : x; }

/// The first `count` pixels' outputs, `filters` apart.
template <int P, int V, typename Element>
void store_pixels(const UnitSums<P, V>& sums, float floor, int64_t count, int64_t filters, Element* dst) {
  for (int64_t p = 0; p < count; ++p) {
    for (int v = 0; v < V; ++v) vectors::store_floats(dst + p * filters + v * lanes, activated(sums.at[p][v], floor));
  }
}

/// The pooling window's maximum of the 4 pixels' sums (compared as Element holds them), then
/// the activation, and its argmax. relu once on the maximum equals relu on each pixel first;
/// only the argmax of a window whose 4 values are all <= 0 differs, and there relu's gradient
/// is 0.
template <int V, typename Element>
void store_pooled(const UnitSums<window_pixels, V>& sums, float floor, Element* dst, uint8_t* argmax) {
  for (int v = 0; v < V; ++v) {
    Floats best = as_destination<Element>(sums.at[0][v]);
    Ints where{};
    for (int p = 1; p < window_pixels; ++p) keep_greater(as_destination<Element>(sums.at[p][v]), p, best, where);
    vectors::store_exact(dst + v * lanes, activated(best, floor));
    vectors::store_positions(argmax + v * lanes, where);
  }
}

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

// Named, not anonymous: backward's lambdas capture it, and CI's unity build includes this file
// into a batch, where GCC warns (-Wsubobject-linkage) of internal linkage inside them.
namespace direct_conv {

/// The output's gradient, and where it goes, for one image.
template <typename Element>
struct OutputGradients {
  const Element* dst;
  const Element* diff_dst;
  const uint8_t* argmax;  // pooled; null unpooled
  bool relu;
  int64_t filters;

  /// The gradient before the activation (relu's derivative from the output) at each of the
  /// unit's pixels, filters [lanes v, lanes (v + 1)) from `out`: pooled, the window's at its argmax
  /// and 0 elsewhere; unpooled, each of the first `count` pixels' own, 0 past them. Adds what
  /// the unit contributes to the bias's gradient into bias_sums.
  template <int P, int V>
  void route(int64_t out, int64_t count, Floats (&routed)[P][V], Floats (&bias_sums)[V]) const {
    auto gradient_at = [&](int64_t at) {
      const Floats gradient = load_floats(diff_dst + at);
      return relu ? (load_floats(dst + at) > 0 ? gradient : Floats{}) : gradient;
    };
    for (int v = 0; v < V; ++v) {
      if (argmax != nullptr) {
        const Floats gradient = gradient_at(out + v * lanes);
        bias_sums[v] += gradient;
        const Bytes where = load<Bytes>(argmax + out + v * lanes);
        for (int p = 0; p < P; ++p) {
          routed[p][v] = __builtin_convertvector(where == int8_t(p), Ints) ? gradient : Floats{};
        }
        continue;
      }
      for (int p = 0; p < P; ++p) {
        routed[p][v] = p < count ? gradient_at(out + p * filters + v * lanes) : Floats{};
        bias_sums[v] += routed[p][v];
      }
    }
  }
};

}  // namespace direct_conv

// Only where the weight gradient's taps fit one block (a 3x3 kernel on one channel): with
// several blocks each re-reads the image's gradients, and oneDNN's backward was 2-4x faster
// (`tenfold-bench-few-channel`-style timings, 1 thread, float32: 1 -> 32 5x5 on 64x64 images
// 10.7 ms vs 4.95; 3 -> 64 5x5 70.8 vs 17.5; 3 -> 32 3x3 5.7 vs 3.9; benchmark_cnn's pooled
// 1 -> 32 5x5 backward 4.9 -> 11-13 ms per replica step), and oneDNN's forward is at its peak
// on 3 channels' longer reductions.
bool DirectConv2DKernel::handles(const WindowGeometry& conv, const Activation& activation, bool need_diff_src) {
  const bool plain_relu = activation.kind == Activation::relu && activation.alpha == 0 && std::isinf(activation.max_value);
  const int64_t taps = conv.window_height * conv.window_width * conv.in_channels;
  return !need_diff_src && (plain_relu || activation.kind == Activation::linear) && taps <= gradient_taps &&
         conv.out_channels % lanes == 0 && conv.dilation_height == 1 && conv.dilation_width == 1 && conv.groups == 1;
}

bool DirectConv2DKernel::handles(const WindowGeometry& conv, const WindowGeometry& pool, const Activation& activation,
                                 bool need_diff_src) {
  return handles(conv, activation, need_diff_src) && pool.window_height == 2 && pool.window_width == 2 &&
         pool.stride_height == 2 && pool.stride_width == 2 && pool.pad_top == 0 && pool.pad_left == 0 &&
         2 * pool.out_height <= conv.out_height && 2 * pool.out_width <= conv.out_width;
}

DirectConv2DKernel::DirectConv2DKernel(const WindowGeometry& conv, const Activation& activation, bool use_bias,
                                       const onednn::memory::desc& stored_weights, bool need_weight_gradients,
                                       DType src_dtype, DType dtype, std::optional<WindowGeometry> max_pool)
    : conv_(conv),
      pool_(max_pool),
      src_dtype_(src_dtype),
      dtype_(dtype),
      use_bias_(use_bias),
      relu_(activation.kind == Activation::relu),
      need_weight_gradients_(need_weight_gradients),
      // Unpooled, a row's last unit reads past its last pixel (zeros) up to a whole unit (8 at most).
      padded_width_((round_up(conv.out_width, sums_in_flight) - 1) * conv.stride_width + conv.window_width),
      padded_rows_((conv.out_height - 1) * conv.stride_height + conv.window_height),
      taps_(conv.window_height * conv.window_width * conv.in_channels),
      keras_weights_(stored_weights, onednn::Conv2DKernel::keras_weights_desc(conv), dtype == DType::bfloat16),
      weight_gradients_(onednn::Conv2DKernel::keras_weights_desc(conv), stored_weights),
      bias_gradients_(size_t(conv.out_channels)),
      zero_bias_(size_t(conv.out_channels), 0.0f),
      padded_(size_t(max_threads()), std::vector<float>(size_t(padded_rows_ * padded_width_ * conv.in_channels), 0.0f)),
      sums_per_thread_((gradient_taps + 1) * conv.out_channels),
      sums_(size_t(max_threads()) * size_t(sums_per_thread_)) {
  check_argument(max_pool ? handles(conv, *max_pool, activation, false) : handles(conv, activation, false),
                 "this Conv2D is not one DirectConv2DKernel computes");
  const int64_t channels = conv.in_channels, right = conv.stride_width * channels;
  const int64_t down = conv.stride_height * padded_width_ * channels;
  const int64_t window[window_pixels] = {0, right, down, down + right};
  for (int p = 0; p < sums_in_flight; ++p) pixel_offsets_[p] = pool_ ? window[p % window_pixels] : p * right;
  // Tap (ky, kx, c) is tap (ky * KW + kx) * C + c, as Keras orders the kernel; backward's
  // taps past the kernel's read tap 0's input into sums nobody reads.
  tap_offsets_.assign(size_t(gradient_taps), 0);
  for (int64_t ky = 0; ky < conv.window_height; ++ky) {
    for (int64_t kx = 0; kx < conv.window_width; ++kx) {
      for (int64_t c = 0; c < channels; ++c) {
        tap_offsets_[size_t((ky * conv.window_width + kx) * channels + c)] = (ky * padded_width_ + kx) * channels + c;
      }
    }
  }
}

template <typename Source>
const float* DirectConv2DKernel::padded_image(const Source* src, int64_t n, std::vector<float>& padded) const {
  const WindowGeometry& g = conv_;
  const int64_t channels = g.in_channels, row = g.in_width * channels;
  const Source* image = src + n * g.in_height * row;
  const int64_t rows = std::min(g.in_height, padded_rows_ - g.pad_top);
  const int64_t columns = std::min(g.in_width, padded_width_ - g.pad_left);
  for (int64_t iy = 0; iy < rows; ++iy) {
    float* to = padded.data() + ((iy + g.pad_top) * padded_width_ + g.pad_left) * channels;
    for (int64_t i = 0; i < columns * channels; ++i) to[i] = as_float(image[iy * row + i]);
  }
  return padded.data();
}

template <int P, typename Call>
void DirectConv2DKernel::for_each_unit(const float* image, int64_t n, Call call) const {
  const int64_t channels = conv_.in_channels, filters = conv_.out_channels;
  const int64_t right = conv_.stride_width * channels, down = conv_.stride_height * padded_width_ * channels;
  if (pool_) {
    for (int64_t py = 0; py < pool_->out_height; ++py) {
      for (int64_t px = 0; px < pool_->out_width; ++px) {
        call(image + 2 * py * down + 2 * px * right, ((n * pool_->out_height + py) * pool_->out_width + px) * filters,
             window_pixels);
      }
    }
    return;
  }
  for (int64_t oy = 0; oy < conv_.out_height; ++oy) {
    for (int64_t ox = 0; ox < conv_.out_width; ox += P) {
      call(image + oy * down + ox * right, ((n * conv_.out_height + oy) * conv_.out_width + ox) * filters,
           std::min<int64_t>(P, conv_.out_width - ox));
    }
  }
}

int DirectConv2DKernel::threads() const { return std::min(max_threads(), int(padded_.size())); }

template <typename Source, typename Visit>
void DirectConv2DKernel::for_each_image(const Source* src, Visit visit) {
  const int64_t filters = conv_.out_channels;
#pragma omp parallel num_threads(threads())
  {
    std::vector<float>& padded = padded_[size_t(thread_number())];
#pragma omp for schedule(static)
    for (int64_t n = 0; n < conv_.batch; ++n) {
      const float* image = padded_image(src, n, padded);
      for (int64_t f0 = 0; f0 < filters; f0 += max_vectors * lanes) {
        with_vector_count(filters - f0, [&](auto vectors) { visit(image, n, f0, vectors); });
      }
    }
  }
}

void DirectConv2DKernel::forward(const void* src, const float* weights, const float* bias, void* dst,
                                 uint8_t* argmax) {
  check_argument((argmax != nullptr) == pool_.has_value(), "DirectConv2DKernel: an argmax goes with max pooling");
  const float* keras = static_cast<const float*>(keras_weights_(weights));
  const float* used_bias = use_bias_ ? bias : zero_bias_.data();
  with_element_type(src_dtype_, [&](auto source) {
    with_element_type(dtype_, [&](auto element) {
      using Source = decltype(source);
      using Element = decltype(element);
      forward_in(static_cast<const Source*>(src), keras, used_bias, static_cast<Element*>(dst), argmax);
    });
  });
}

template <typename Source, typename Element>
void DirectConv2DKernel::forward_in(const Source* src, const float* weights, const float* bias, Element* dst,
                                    uint8_t* argmax) {
  const int64_t filters = conv_.out_channels;
  const float floor = relu_ ? 0.0f : -std::numeric_limits<float>::infinity();
  for_each_image(src, [&](const float* image, int64_t n, int64_t f0, auto vectors) {
    constexpr int V = decltype(vectors)::value;
    if (pool_) {
      for_each_unit<window_pixels>(image, n, [&](const float* first, int64_t out, int64_t) {
        const UnitPixels<window_pixels> pixels(first, pixel_offsets_);
        store_pooled(convolve_unit<window_pixels, V>(pixels, tap_offsets_.data(), taps_, weights + f0, filters,
                                                     bias + f0),
                     floor, dst + out + f0, argmax + out + f0);
      });
      return;
    }
    constexpr int P = row_unit(V);
    for_each_unit<P>(image, n, [&](const float* first, int64_t out, int64_t count) {
      const UnitPixels<P> pixels(first, pixel_offsets_);
      store_pixels(convolve_unit<P, V>(pixels, tap_offsets_.data(), taps_, weights + f0, filters, bias + f0), floor,
                   count, filters, dst + out + f0);
    });
  });
}

void DirectConv2DKernel::backward(const void* src, const void* dst, const void* diff_dst, const float*,
                                  void* diff_src, float* diff_weights, float* diff_bias, const uint8_t* argmax) {
  check_argument(diff_src == nullptr, "a DirectConv2DKernel computes no input gradient");
  check_argument((argmax != nullptr) == pool_.has_value(), "DirectConv2DKernel: an argmax goes with max pooling");
  if (!need_weight_gradients_) return;
  with_element_type(src_dtype_, [&](auto source) {
    with_element_type(dtype_, [&](auto element) {
      using Source = decltype(source);
      using Element = decltype(element);
      backward_in(static_cast<const Source*>(src), static_cast<const Element*>(dst),
                  static_cast<const Element*>(diff_dst), argmax);
    });
  });
  weight_gradients_.write(diff_weights);
  if (use_bias_ && diff_bias != nullptr) std::copy(bias_gradients_.begin(), bias_gradients_.end(), diff_bias);
}

template <typename Source, typename Element>
void DirectConv2DKernel::backward_in(const Source* src, const Element* dst, const Element* diff_dst,
                                     const uint8_t* argmax) {
  const int64_t filters = conv_.out_channels;
  const int team = threads();
  std::fill(sums_.begin(), sums_.end(), 0.0f);
  const direct_conv::OutputGradients<Element> gradients{dst, diff_dst, argmax, relu_, filters};
  for_each_image(src, [&](const float* image, int64_t n, int64_t f0, auto vectors) {
    constexpr int V = decltype(vectors)::value, TB = gradient_taps, P = backward_row_unit;
    float* own = sums_.data() + thread_number() * sums_per_thread_;
    // The sums of all taps x filters [f0, f0 + lanes V) in registers across the image.
    Floats block[TB][V] = {}, bias_block[V] = {};
    // Units of 4 pixels, pooled (windows) or not (rows).
    for_each_unit<P>(image, n, [&](const float* first, int64_t out, int64_t count) {
      const UnitPixels<P> pixels(first, pixel_offsets_);
      Floats routed[P][V];
      gradients.template route<P, V>(out + f0, count, routed, bias_block);
      // Unrolled, so the block's sums stay in registers (GCC kept them in memory).
#pragma GCC unroll 32
      for (int t = 0; t < TB; ++t) {
        for (int p = 0; p < P; ++p) {
          const float x = pixels.at[p][tap_offsets_[size_t(t)]];
          for (int v = 0; v < V; ++v) block[t][v] += x * routed[p][v];
        }
      }
    });
    auto add = [](float* to, Floats v) { store(to, load(to) + v); };
    for (int t = 0; t < TB; ++t) {
      for (int v = 0; v < V; ++v) add(own + t * filters + f0 + v * lanes, block[t][v]);
    }
    for (int v = 0; v < V; ++v) add(own + gradient_taps * filters + f0 + v * lanes, bias_block[v]);
  });
  // The threads' sums in thread order, so a run's gradients do not depend on timing.
  std::vector<float>& keras_gradients = weight_gradients_.values();
  std::fill(keras_gradients.begin(), keras_gradients.end(), 0.0f);
  std::fill(bias_gradients_.begin(), bias_gradients_.end(), 0.0f);
  for (int thread = 0; thread < team; ++thread) {
    const float* own = sums_.data() + thread * sums_per_thread_;
    for (int64_t i = 0; i < taps_ * filters; ++i) keras_gradients[size_t(i)] += own[i];
    const float* own_bias = own + gradient_taps * filters;
    for (int64_t f = 0; f < filters; ++f) bias_gradients_[size_t(f)] += own_bias[f];
  }
}

}  // namespace tenfold::kernels
