#include "kernels/few_channel_conv.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "core/error.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/vectors.h"

namespace tenfold::kernels {

namespace {

using vectors::Floats;
using vectors::lanes;
using vectors::load;
constexpr int max_in_channels = 4, max_filters = 16;

/// The rows an output row reads, each channel planar and zero outside the image:
/// value (ky, c, x + pad_left) at [(ky * C + c) * length + x + pad_left], long enough for the
/// last vector of the last tap.
struct RowWindow {
  explicit RowWindow(const WindowGeometry& geometry)
      : g(geometry), length(g.out_width + g.window_width + lanes),
        values(size_t(g.window_height * g.in_channels * length), 0.0f) {}

  /// Gathers the rows output row `oy` of image `n` reads from src [N, H, W, C].
  void gather(const float* src, int64_t n, int64_t oy) {
    const int64_t channels = g.in_channels;
    for (int64_t ky = 0; ky < g.window_height; ++ky) {
      const int64_t iy = oy + ky - g.pad_top;
      for (int64_t c = 0; c < channels; ++c) {
        float* row = values.data() + (ky * channels + c) * length;
        if (iy < 0 || iy >= g.in_height) {
          std::fill(row, row + length, 0.0f);
          continue;
        }
        const float* in = src + (n * g.in_height + iy) * g.in_width * channels + c;
        if (channels == 1) {
          std::memcpy(row + g.pad_left, in, size_t(g.in_width) * sizeof(float));
        } else {
          for (int64_t x = 0; x < g.in_width; ++x) row[g.pad_left + x] = in[x * channels];
        }
      }
    }
  }
  const float* at(int64_t ky, int64_t c, int64_t x) const {
    return values.data() + (ky * g.in_channels + c) * length + x;
  }

  const WindowGeometry& g;
  int64_t length;
  std::vector<float> values;
};

/// dst = conv(src) + bias: C channels, F filters, weights [KH, KW, C, F].
template <int C, int F>
void forward_images(const WindowGeometry& g, const float* src, const float* weights, const float* bias, float* dst) {
#pragma omp parallel
  {
    RowWindow rows(g);
#pragma omp for schedule(static)
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t oy = 0; oy < g.out_height; ++oy) {
        rows.gather(src, n, oy);
        float* out = dst + (n * g.out_height + oy) * g.out_width * F;
        for (int64_t x0 = 0; x0 < g.out_width; x0 += lanes) {
          Floats sums[F];
          for (int f = 0; f < F; ++f) sums[f] = Floats{} + bias[f];
          for (int64_t ky = 0; ky < g.window_height; ++ky) {
            for (int64_t kx = 0; kx < g.window_width; ++kx) {
              for (int c = 0; c < C; ++c) {
                const Floats in = load(rows.at(ky, c, x0 + kx));
                const float* w = weights + ((ky * g.window_width + kx) * C + c) * F;
                for (int f = 0; f < F; ++f) sums[f] += w[f] * in;
              }
            }
          }
          const int64_t count = std::min(lanes, g.out_width - x0);
          for (int64_t x = 0; x < count; ++x) {
            for (int f = 0; f < F; ++f) out[(x0 + x) * F + f] = sums[f][x];
          }
        }
      }
    }
  }
}

using Forward = void (*)(const WindowGeometry&, const float*, const float*, const float*, float*);

/// forward_images for C channels and each filter count 1..max_filters.
template <int C, size_t... I>
constexpr std::array<Forward, sizeof...(I)> forward_table(std::index_sequence<I...>) {
  return {&forward_images<C, int(I) + 1>...};
}
/// [channels - 1][filters - 1]: compile-time counts keep the sums in registers (2x faster).
constexpr std::array<std::array<Forward, max_filters>, max_in_channels> forward_by_shape = {
    forward_table<1>(std::make_index_sequence<max_filters>()), forward_table<2>(std::make_index_sequence<max_filters>()),
    forward_table<3>(std::make_index_sequence<max_filters>()), forward_table<4>(std::make_index_sequence<max_filters>())};

}  // namespace

bool FewChannelConv2DKernel::handles(const WindowGeometry& g, bool need_diff_src) {
  return !need_diff_src && g.in_channels <= max_in_channels &&
         g.out_channels <= max_filters && g.stride_height == 1 && g.stride_width == 1 && g.dilation_height == 1 &&
         g.dilation_width == 1 && g.groups == 1;
}

FewChannelConv2DKernel::FewChannelConv2DKernel(const WindowGeometry& g, Activation activation, bool use_bias,
                                               const onednn::memory::desc& stored_weights,
                                               bool need_weight_gradients, bool bfloat16_weights)
    : g_(g),
      use_bias_(use_bias),
      keras_weights_(stored_weights, onednn::Conv2DKernel::keras_weights_desc(g), bfloat16_weights),
      zero_bias_(size_t(g.out_channels), 0.0f) {
  check_argument(handles(g, false), "this convolution is not one of few channels");
  if (need_weight_gradients) backward_.emplace(g, activation, use_bias, stored_weights, false);
  if (activation.kind != Activation::linear) {
    activation_ = onednn::ActivationKernel(activation, g.batch * g.out_height * g.out_width, g.out_channels);
  }
}

void FewChannelConv2DKernel::forward(const void* src, const float* weights, const float* bias, void* dst) {
  const float* keras = static_cast<const float*>(keras_weights_(weights));
  forward_by_shape[size_t(g_.in_channels - 1)][size_t(g_.out_channels - 1)](
      g_, static_cast<const float*>(src), keras, use_bias_ ? bias : zero_bias_.data(), static_cast<float*>(dst));
  if (activation_.activation().kind != Activation::linear) activation_.forward(dst, dst);
}

void FewChannelConv2DKernel::backward(const void* src, const void* dst, void* diff_dst, const float* weights,
                                      void* diff_src, float* diff_weights, float* diff_bias) {
  check_argument(diff_src == nullptr, "a few-channel Conv2D kernel computes no input gradient");
  if (backward_) backward_->backward(src, dst, diff_dst, weights, nullptr, diff_weights, diff_bias);
}

}  // namespace tenfold::kernels
