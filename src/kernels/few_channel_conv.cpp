#include "kernels/few_channel_conv.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "core/error.h"
#include "kernels/bfloat16.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/threads.h"
#include "kernels/vectors.h"

namespace tenfold::kernels {

namespace {

using vectors::Floats;
using vectors::lanes;
using vectors::load;
using vectors::store_floats;
constexpr int max_in_channels = 4, max_filters = 16;
// Past 8 filters the shuffles between planar and interleaved vectors cost more than moving
// values one by one (forward 1 -> 16 3x3: one by one 5.0-5.2 ms, shuffled 6.3-6.6), and past
// 6 the direct weight gradient runs slower than oneDNN's, which then computes it:
// `tenfold-bench-few-channel --filters F --kernel K`, float32 backward, oneDNN's time over
// this kernel's: 1.97 (F 4, K 3), 1.26 (6), 1.21 (8), 0.85 (12), 0.63 (16); K 5: 1.81, 1.53,
// 0.85, 0.77, 0.43.
constexpr int max_shuffled_filters = 8, max_direct_gradient_filters = 6;

int64_t round_up_to_lanes(int64_t count) { return (count + lanes - 1) / lanes * lanes; }

/// The tables `permute` takes to move lanes x F values between F vectors: output vector j's lane l
/// comes from lane source_lane(j, l) of input vector source_vector(j, l), by a two-vector
/// shuffle of input vectors (2p, 2p + 1): index [j][p][l] is its position in the pair, -1 for
/// lanes from another pair.
template <int F, typename SourceVector, typename SourceLane>
constexpr auto pair_shuffles(SourceVector source_vector, SourceLane source_lane) {
  constexpr int pairs = (F + 1) / 2;
  std::array<std::array<std::array<int32_t, lanes>, pairs>, F> shuffles{};
  for (int j = 0; j < F; ++j) {
    for (int p = 0; p < pairs; ++p) {
      for (int l = 0; l < int(lanes); ++l) {
        const int vector = source_vector(j, l);
        shuffles[j][p][l] = vector / 2 == p ? (vector % 2) * int(lanes) + source_lane(j, l) : -1;
      }
    }
  }
  return shuffles;
}

/// lanes pixels x F filters between planar vectors (planar[f] = the pixels of filter f) and NHWC's
/// interleaved ones (interleaved[j] = values lanes j .. lanes j + lanes - 1 of [pixel][filter]).
template <int F>
constexpr auto to_interleaved = pair_shuffles<F>([](int j, int l) { return (j * int(lanes) + l) % F; },
                                                 [](int j, int l) { return (j * int(lanes) + l) / F; });
template <int F>
constexpr auto to_planar = pair_shuffles<F>([](int f, int x) { return (x * F + f) / int(lanes); },
                                            [](int f, int x) { return (x * F + f) % int(lanes); });

/// out = in moved by `shuffles` (to_interleaved or to_planar), a pair of input vectors at a
/// time: one value at a time cost as much as the sums (96 moves for LeNet's 6 filters against
/// 18 shuffles; forward 1.77 -> 1.40 ms, 256 images, 1 thread).
template <int F, typename Shuffles>
void permute(const Floats (&in)[F], const Shuffles& shuffles, Floats (&out)[F]) {
  for (int j = 0; j < F; ++j) {
    Floats values{};
    for (size_t p = 0; p < shuffles[j].size(); ++p) {
      const vectors::Ints source = load<vectors::Ints>(shuffles[j][p].data());
      const Floats& second = in[std::min<size_t>(2 * p + 1, F - 1)];  // the last of an odd F: itself
      values = source >= 0 ? vectors::shuffle(in[2 * p], second, source) : values;
    }
    out[j] = values;
  }
}

/// One image's channels planar and zero-padded, in float32: input value (c, iy, ix) at
/// [c][iy + pad_top][ix + pad_left], rows `width` long. Output pixel (oy, ox)'s tap (ky, kx, c)
/// reads [c][oy + ky][ox + kx]; `width` covers the last vector of pixels of every tap.
struct PaddedPlanes {
  explicit PaddedPlanes(const WindowGeometry& geometry)
      : g(geometry), rows(g.out_height + g.window_height - 1),
        width(round_up_to_lanes(g.out_width) + g.window_width - 1),
        values(size_t(g.in_channels * rows * width), 0.0f) {}

  /// Fills the interior from image `n` of src [N, H, W, C]; the border stays zero.
  template <typename Element>
  void gather(const Element* src, int64_t n) {
    const int64_t copied_rows = std::min(g.in_height, rows - g.pad_top);
    const int64_t copied_columns = std::min(g.in_width, width - g.pad_left);
    for (int64_t iy = 0; iy < copied_rows; ++iy) {
      const Element* in = src + (n * g.in_height + iy) * g.in_width * g.in_channels;
      float* row = values.data() + (iy + g.pad_top) * width + g.pad_left;
      if (g.in_channels == 1) {  // a copy GCC vectorizes
        for (int64_t ix = 0; ix < copied_columns; ++ix) row[ix] = as_float(in[ix]);
        continue;
      }
      for (int64_t ix = 0; ix < copied_columns; ++ix) {
        for (int64_t c = 0; c < g.in_channels; ++c) row[c * rows * width + ix] = as_float(in[ix * g.in_channels + c]);
      }
    }
  }
  /// The offset of tap (ky, kx, c) from output pixel (0, 0)'s place.
  int64_t tap_offset(int64_t ky, int64_t kx, int64_t c) const { return (c * rows + ky) * width + kx; }
  const float* row(int64_t oy) const { return values.data() + oy * width; }

  const WindowGeometry& g;
  int64_t rows, width;
  std::vector<float> values;
};

/// row[f * plane + x] = pixels[x * F + f] for `count` pixels, a vector at a time by shuffles.
template <int F, typename Element>
void transpose_pixels(const Element* pixels, float* row, int64_t plane, int64_t count) {
  int64_t x0 = 0;
  for (; x0 + lanes <= count; x0 += lanes) {
    Floats interleaved[F], planar[F];
    for (int j = 0; j < F; ++j) interleaved[j] = vectors::load_floats(pixels + x0 * F + j * lanes);
    permute(interleaved, to_planar<F>, planar);
    for (int f = 0; f < F; ++f) vectors::store(row + f * plane + x0, planar[f]);
  }
  for (int64_t x = x0; x < count; ++x) {
    for (int f = 0; f < F; ++f) row[f * plane + x] = as_float(pixels[x * F + f]);
  }
}
using Transpose = void (*)(const void*, float*, int64_t, int64_t);
template <typename Element, size_t... I>
constexpr std::array<Transpose, sizeof...(I)> transpose_table(std::index_sequence<I...>) {
  return {[](const void* pixels, float* row, int64_t plane, int64_t count) {
    transpose_pixels<int(I) + 1>(static_cast<const Element*>(pixels), row, plane, count);
  }...};
}
/// [filters - 1]
template <typename Element>
constexpr std::array<Transpose, max_direct_gradient_filters> transpose =
    transpose_table<Element>(std::make_index_sequence<max_direct_gradient_filters>());

/// One image's output gradient planar, in float32: (oy, ox, f) at [f][oy][ox], rows
/// round_up(out_width, lanes) long and zero past out_width. Adds every gradient into
/// `bias_sums[f]`.
struct GradientPlanes {
  explicit GradientPlanes(const WindowGeometry& geometry)
      : g(geometry), width(round_up_to_lanes(g.out_width)), plane(g.out_height * width),
        values(size_t(g.out_channels * plane), 0.0f) {}

  /// From one image's gradient [OH, OW, F].
  template <typename Element>
  void gather(const Element* image, Floats* bias_sums) {
    const int64_t filters = g.out_channels;
    for (int64_t oy = 0; oy < g.out_height; ++oy) {
      const Element* in = image + oy * g.out_width * filters;
      transpose<Element>[size_t(filters - 1)](in, values.data() + oy * width, plane, g.out_width);
    }
    for (int64_t f = 0; f < filters; ++f) {
      Floats sum{};  // in a register: a sum in memory would wait on its own store
      for (int64_t i = 0; i < plane; i += lanes) sum += load(values.data() + f * plane + i);
      bias_sums[f] += sum;
    }
  }
  const float* at(int64_t f, int64_t oy, int64_t ox) const { return values.data() + f * plane + oy * width + ox; }

  const WindowGeometry& g;
  int64_t width, plane;
  std::vector<float> values;
};

// ---- Forward: an output row's pixels a vector (lanes) at a time, one vector of sums per filter. (Computing
// the row's interleaved [OW, F] values as vectors instead, from the input repeated per filter,
// saved the scatter below but ran 20% slower: its loads, at offsets of kx x F floats, nearly
// all cross a cache line.)

/// One image's dst [OH, OW, F] = conv(its planes) + bias: C channels, F filters, weights
/// [KH, KW, C, F].
template <int C, int F, typename Element>
void forward_image(const PaddedPlanes& in, const float* weights, const float* bias, void* dst) {
  const WindowGeometry& g = in.g;
  for (int64_t oy = 0; oy < g.out_height; ++oy) {
    const float* row = in.row(oy);
    Element* out = static_cast<Element*>(dst) + oy * g.out_width * F;
    for (int64_t x0 = 0; x0 < g.out_width; x0 += lanes) {
      Floats sums[F];
      for (int f = 0; f < F; ++f) sums[f] = Floats{} + bias[f];
      for (int64_t ky = 0; ky < g.window_height; ++ky) {
        for (int64_t kx = 0; kx < g.window_width; ++kx) {
          for (int c = 0; c < C; ++c) {
            const Floats value = load(row + in.tap_offset(ky, kx, c) + x0);
            const float* w = weights + ((ky * g.window_width + kx) * C + c) * F;
            for (int f = 0; f < F; ++f) sums[f] += w[f] * value;
          }
        }
      }
      Element* pixels = out + x0 * F;
      const int64_t count = std::min(lanes, g.out_width - x0);
      if constexpr (F > max_shuffled_filters) {
        for (int64_t x = 0; x < count; ++x) {
          for (int f = 0; f < F; ++f) assign(pixels[x * F + f], sums[f][x]);
        }
        continue;
      }
      Floats interleaved[F];
      permute(sums, to_interleaved<F>, interleaved);
      if (count == lanes) {
        for (int j = 0; j < F; ++j) store_floats(pixels + j * lanes, interleaved[j]);
      } else {  // the row's last pixels: no store past them
        float values[lanes * F];
        std::memcpy(values, interleaved, sizeof(values));
        for (int64_t i = 0; i < count * F; ++i) assign(pixels[i], values[i]);
      }
    }
  }
}

using Forward = void (*)(const PaddedPlanes&, const float*, const float*, void*);

/// forward_image for C channels and each filter count 1..max_filters.
template <int C, typename Element, size_t... I>
constexpr std::array<Forward, sizeof...(I)> forward_table(std::index_sequence<I...>) {
  return {&forward_image<C, int(I) + 1, Element>...};
}
/// [channels - 1][filters - 1]: compile-time counts keep the sums in registers (2x faster).
template <typename Element>
constexpr std::array<std::array<Forward, max_filters>, max_in_channels> forward_by_shape = {
    forward_table<1, Element>(std::make_index_sequence<max_filters>()),
    forward_table<2, Element>(std::make_index_sequence<max_filters>()),
    forward_table<3, Element>(std::make_index_sequence<max_filters>()),
    forward_table<4, Element>(std::make_index_sequence<max_filters>())};

// ---- Weight gradients: dW[tap][f] = sum over pixels of the tap's input * dy[f], a vector of
// pixels at a time, sums for a block of taps x the filters kept in registers across an image.

/// Taps per block for F filters: the sums, the filters' gradients and an input in AVX-512's 32
/// registers.
constexpr int tap_block(int filters) { return std::min(8, (30 - filters) / filters); }

/// sums[t * F + f] += the image's sum of input at tap_offsets[t] x gradient of filter f.
template <int F>
void accumulate_image(const PaddedPlanes& in, const GradientPlanes& dy, const int64_t* tap_offsets, Floats* sums) {
  constexpr int TB = tap_block(F);
  Floats block[TB][F] = {};
  for (int64_t oy = 0; oy < in.g.out_height; ++oy) {
    const float* row = in.row(oy);
    for (int64_t x0 = 0; x0 < dy.width; x0 += lanes) {
      Floats gradients[F];
      for (int f = 0; f < F; ++f) gradients[f] = load(dy.at(f, oy, x0));
      for (int t = 0; t < TB; ++t) {
        const Floats value = load(row + tap_offsets[t] + x0);
        for (int f = 0; f < F; ++f) block[t][f] += value * gradients[f];
      }
    }
  }
  for (int t = 0; t < TB; ++t) {
    for (int f = 0; f < F; ++f) sums[t * F + f] += block[t][f];
  }
}

using Accumulate = void (*)(const PaddedPlanes&, const GradientPlanes&, const int64_t*, Floats*);
template <size_t... I>
constexpr std::array<Accumulate, sizeof...(I)> accumulate_table(std::index_sequence<I...>) {
  return {&accumulate_image<int(I) + 1>...};
}
/// [filters - 1]
constexpr std::array<Accumulate, max_direct_gradient_filters> accumulate_by_filters =
    accumulate_table(std::make_index_sequence<max_direct_gradient_filters>());

// The activation runs on a group of images' output while it is in the L2 cache: on the whole
// output (LeNet's 9.6 MB) each pass costs a trip to memory.
constexpr int64_t group_bytes = 256 << 10;

}  // namespace

bool FewChannelConv2DKernel::handles(const WindowGeometry& g, bool need_diff_src) {
  return !need_diff_src && g.in_channels <= max_in_channels &&
         g.out_channels <= max_filters && g.stride_height == 1 && g.stride_width == 1 && g.dilation_height == 1 &&
         g.dilation_width == 1 && g.groups == 1;
}

FewChannelConv2DKernel::FewChannelConv2DKernel(const WindowGeometry& g, Activation activation, bool use_bias,
                                               const onednn::memory::desc& stored_weights,
                                               bool need_weight_gradients, DType dtype)
    : g_(g),
      dtype_(dtype),
      use_bias_(use_bias),
      direct_gradients_(need_weight_gradients && g.out_channels <= max_direct_gradient_filters),
      image_outputs_(g.out_height * g.out_width * g.out_channels),
      group_images_(std::clamp(group_bytes / (image_outputs_ * int64_t(sizeof(float))), int64_t(1), g.batch)),
      activation_(activation),
      keras_weights_(stored_weights, onednn::Conv2DKernel::keras_weights_desc(g), dtype == DType::bfloat16),
      zero_bias_(size_t(g.out_channels), 0.0f) {
  check_argument(handles(g, false), "this convolution is not one of few channels");
  if (need_weight_gradients && !direct_gradients_) {
    onednn_gradients_.emplace(g, activation, use_bias, stored_weights, false, dtype);
  }
  if (direct_gradients_) {
    weight_gradients_ = onednn::GradientsInKerasLayout(onednn::Conv2DKernel::keras_weights_desc(g), stored_weights);
  }
  threads_.resize(size_t(max_threads()));
  if (activation.kind == Activation::linear) return;
  const int64_t pixels = g.out_height * g.out_width, last_group = g.batch % group_images_;
  for (ThreadState& thread : threads_) {
    thread.full_group = onednn::ActivationKernel(activation, group_images_ * pixels, g.out_channels,
                                                 onednn::data_type_of(dtype));
    if (last_group > 0) {
      thread.last_group = onednn::ActivationKernel(activation, last_group * pixels, g.out_channels,
                                                   onednn::data_type_of(dtype));
    }
    if (direct_gradients_) {
      thread.activation_gradient = allocate_aligned(size_t(group_images_ * image_outputs_) * dtype_size(dtype));
    }
  }
}

onednn::ActivationKernel& FewChannelConv2DKernel::activation_for(ThreadState& thread, int64_t images) {
  return images == group_images_ ? thread.full_group : thread.last_group;
}

void FewChannelConv2DKernel::forward(const void* src, const float* weights, const float* bias, void* dst) {
  const float* keras = static_cast<const float*>(keras_weights_(weights));
  const float* used_bias = use_bias_ ? bias : zero_bias_.data();
  with_element_type(dtype_, [&](auto element) {
    using Element = decltype(element);
    forward_in(static_cast<const Element*>(src), keras, used_bias, static_cast<Element*>(dst));
  });
}

template <typename Element>
void FewChannelConv2DKernel::forward_in(const Element* src, const float* weights, const float* bias, Element* dst) {
  const Forward forward_image = forward_by_shape<Element>[size_t(g_.in_channels - 1)][size_t(g_.out_channels - 1)];
  const int64_t groups = (g_.batch + group_images_ - 1) / group_images_;
  const bool activates = activation_.kind != Activation::linear;
#pragma omp parallel num_threads(std::min(max_threads(), int(threads_.size())))
  {
    ThreadState& thread = threads_[size_t(thread_number())];
    PaddedPlanes in(g_);
#pragma omp for schedule(static)
    for (int64_t group = 0; group < groups; ++group) {
      const int64_t first = group * group_images_, images = std::min(group_images_, g_.batch - first);
      for (int64_t n = first; n < first + images; ++n) {
        in.gather(src, n);
        forward_image(in, weights, bias, dst + n * image_outputs_);
      }
      Element* outputs = dst + first * image_outputs_;
      if (activates) activation_for(thread, images).forward(outputs, outputs);
    }
  }
}

void FewChannelConv2DKernel::backward(const void* src, const void* dst, void* diff_dst, const float* weights,
                                      void* diff_src, float* diff_weights, float* diff_bias) {
  check_argument(diff_src == nullptr, "a few-channel Conv2D kernel computes no input gradient");
  if (onednn_gradients_) {
    onednn_gradients_->backward(src, dst, diff_dst, weights, nullptr, diff_weights, diff_bias);
    return;
  }
  if (!direct_gradients_) return;
  with_element_type(dtype_, [&](auto element) {
    using Element = decltype(element);
    weight_gradients(static_cast<const Element*>(src), static_cast<const Element*>(dst),
                     static_cast<const Element*>(diff_dst), diff_bias);
  });
  weight_gradients_.write(diff_weights);
}

template <typename Element>
void FewChannelConv2DKernel::weight_gradients(const Element* src, const Element* dst, const Element* diff_dst,
                                              float* diff_bias) {
  const int64_t filters = g_.out_channels, channels = g_.in_channels;
  const int taps_per_block = tap_block(int(filters));
  const int64_t taps = g_.window_height * g_.window_width * channels;
  const int64_t padded_taps = (taps + taps_per_block - 1) / taps_per_block * taps_per_block;
  const int64_t groups = (g_.batch + group_images_ - 1) / group_images_;
  const bool activates = activation_.kind != Activation::linear;
  // Per thread: sums [padded_taps][filters], then the bias's [filters].
  const int64_t sums_per_thread = (padded_taps + 1) * filters;
  const int threads = std::min(max_threads(), int(threads_.size()));
  std::vector<Floats> sums(size_t(threads * sums_per_thread), Floats{});
#pragma omp parallel num_threads(threads)
  {
    ThreadState& thread = threads_[size_t(thread_number())];
    Floats* own = sums.data() + thread_number() * sums_per_thread;
    PaddedPlanes in(g_);
    GradientPlanes dy(g_);
    // Tap (ky, kx, c) is tap ((ky * KW) + kx) * C + c, as Keras orders the kernel; a padding
    // tap reads tap 0 into sums nobody reads.
    std::vector<int64_t> offsets(size_t(padded_taps), 0);
    for (int64_t ky = 0; ky < g_.window_height; ++ky)
      for (int64_t kx = 0; kx < g_.window_width; ++kx)
        for (int64_t c = 0; c < channels; ++c) offsets[size_t((ky * g_.window_width + kx) * channels + c)] = in.tap_offset(ky, kx, c);
    const Accumulate accumulate = accumulate_by_filters[size_t(filters - 1)];
#pragma omp for schedule(static)
    for (int64_t group = 0; group < groups; ++group) {
      const int64_t first = group * group_images_, images = std::min(group_images_, g_.batch - first);
      const Element* gradients = diff_dst + first * image_outputs_;
      if (activates) {
        // The activation's input gradient to the thread's own copy, in cache for the sums.
        Element* copy = reinterpret_cast<Element*>(thread.activation_gradient.get());
        activation_for(thread, images).backward(nullptr, dst + first * image_outputs_, gradients, copy);
        gradients = copy;
      }
      for (int64_t n = first; n < first + images; ++n) {
        in.gather(src, n);
        dy.gather(gradients + (n - first) * image_outputs_, own + padded_taps * filters);
        for (int64_t t0 = 0; t0 < padded_taps; t0 += taps_per_block) accumulate(in, dy, offsets.data() + t0, own + t0 * filters);
      }
    }
  }
  // The threads' sums in thread order, so a run's gradients do not depend on timing.
  std::vector<float>& keras_gradients = weight_gradients_.values();
  std::fill(keras_gradients.begin(), keras_gradients.end(), 0.0f);
  std::vector<float> bias(size_t(filters), 0.0f);
  for (int thread = 0; thread < threads; ++thread) {
    const Floats* own = sums.data() + thread * sums_per_thread;
    for (int64_t tap = 0; tap < taps; ++tap) {
      for (int64_t f = 0; f < filters; ++f) keras_gradients[size_t(tap * filters + f)] += vectors::sum(own[tap * filters + f]);
    }
    for (int64_t f = 0; f < filters; ++f) bias[size_t(f)] += vectors::sum(own[padded_taps * filters + f]);
  }
  if (use_bias_ && diff_bias != nullptr) std::copy(bias.begin(), bias.end(), diff_bias);
}

}  // namespace tenfold::kernels
