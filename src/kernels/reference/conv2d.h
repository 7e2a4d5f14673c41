#pragma once
// Plain C++ convolution: the oracle the oneDNN kernels are tested against. NHWC activations,
// Keras HWIO kernels [window_height, window_width, in_channels / groups, filters], dilation and
// groups as Keras'. Templated so gradient checks can run in double precision.
#include "kernels/window.h"

namespace tenfold::kernels::reference {

/// src [N,H,W,C], kernel [KH,KW,C/groups,F], bias [F] or null -> dst [N,OH,OW,F]. Output f
/// reads the input channels of its group, f / (F / groups).
template <typename T>
void conv2d_forward(const WindowGeometry& g, const T* src, const T* kernel, const T* bias, T* dst) {
  const int64_t group_in = g.in_channels / g.groups, group_out = g.out_channels / g.groups;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_height; ++oh)
      for (int64_t ow = 0; ow < g.out_width; ++ow)
        for (int64_t f = 0; f < g.out_channels; ++f) {
          T sum = bias ? bias[f] : T(0);
          const int64_t first_channel = f / group_out * group_in;
          for (int64_t kh = 0; kh < g.window_height; ++kh) {
            int64_t ih = oh * g.stride_height + kh * g.dilation_height - g.pad_top;
            if (ih < 0 || ih >= g.in_height) continue;
            for (int64_t kw = 0; kw < g.window_width; ++kw) {
              int64_t iw = ow * g.stride_width + kw * g.dilation_width - g.pad_left;
              if (iw < 0 || iw >= g.in_width) continue;
              const T* pixel = src + ((n * g.in_height + ih) * g.in_width + iw) * g.in_channels + first_channel;
              const T* taps = kernel + (kh * g.window_width + kw) * group_in * g.out_channels;
              for (int64_t c = 0; c < group_in; ++c) sum += pixel[c] * taps[c * g.out_channels + f];
            }
          }
          dst[((n * g.out_height + oh) * g.out_width + ow) * g.out_channels + f] = sum;
        }
}

/// Gradients of conv2d_forward. Each output pointer may be null when not needed; they are
/// overwritten, not accumulated.
template <typename T>
void conv2d_backward(const WindowGeometry& g, const T* src, const T* kernel, const T* diff_dst,
                     T* diff_src, T* diff_kernel, T* diff_bias) {
  const int64_t group_in = g.in_channels / g.groups, group_out = g.out_channels / g.groups;
  int64_t kernel_size = g.window_height * g.window_width * group_in * g.out_channels;
  if (diff_src)
    for (int64_t i = 0; i < g.batch * g.in_height * g.in_width * g.in_channels; ++i) diff_src[i] = 0;
  if (diff_kernel)
    for (int64_t i = 0; i < kernel_size; ++i) diff_kernel[i] = 0;
  if (diff_bias)
    for (int64_t f = 0; f < g.out_channels; ++f) diff_bias[f] = 0;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_height; ++oh)
      for (int64_t ow = 0; ow < g.out_width; ++ow)
        for (int64_t f = 0; f < g.out_channels; ++f) {
          T grad = diff_dst[((n * g.out_height + oh) * g.out_width + ow) * g.out_channels + f];
          if (diff_bias) diff_bias[f] += grad;
          const int64_t first_channel = f / group_out * group_in;
          for (int64_t kh = 0; kh < g.window_height; ++kh) {
            int64_t ih = oh * g.stride_height + kh * g.dilation_height - g.pad_top;
            if (ih < 0 || ih >= g.in_height) continue;
            for (int64_t kw = 0; kw < g.window_width; ++kw) {
              int64_t iw = ow * g.stride_width + kw * g.dilation_width - g.pad_left;
              if (iw < 0 || iw >= g.in_width) continue;
              int64_t pixel = ((n * g.in_height + ih) * g.in_width + iw) * g.in_channels + first_channel;
              int64_t taps = (kh * g.window_width + kw) * group_in * g.out_channels;
              for (int64_t c = 0; c < group_in; ++c) {
                if (diff_src) diff_src[pixel + c] += grad * kernel[taps + c * g.out_channels + f];
                if (diff_kernel) diff_kernel[taps + c * g.out_channels + f] += grad * src[pixel + c];
              }
            }
          }
        }
}

}  // namespace tenfold::kernels::reference
