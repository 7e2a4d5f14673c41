#pragma once
// Geometry of a sliding window over an NHWC image: shared by convolution and pooling, by the
// reference kernels and by oneDNN, so every implementation agrees on sizes and padding.
#include <cstdint>
#include <string>

namespace tenfold::kernels {

enum class Padding { valid, same };

Padding parse_padding(const std::string& name);
const char* padding_name(Padding padding);

struct WindowGeometry {
  int64_t batch = 0;
  int64_t in_height = 0, in_width = 0, in_channels = 0;
  int64_t out_channels = 0;  // filters for a convolution, in_channels for pooling
  int64_t window_height = 0, window_width = 0;
  int64_t stride_height = 1, stride_width = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t out_height = 0, out_width = 0;
  // Convolutions: taps `dilation` apart; `groups` splits the channels (in / groups to
  // out / groups each; a depthwise convolution has groups = in_channels).
  int64_t dilation_height = 1, dilation_width = 1;
  int64_t groups = 1;
};

/// Keras/TensorFlow semantics: 'valid' has no padding, out = (in - window) / stride + 1;
/// 'same' gives out = ceil(in / stride), padding split with the extra row/column at the end.
/// A dilated window spans (window - 1) * dilation + 1.
WindowGeometry make_window_geometry(int64_t batch, int64_t in_height, int64_t in_width,
                                    int64_t in_channels, int64_t out_channels,
                                    int64_t window_height, int64_t window_width,
                                    int64_t stride_height, int64_t stride_width, Padding padding,
                                    int64_t dilation_height = 1, int64_t dilation_width = 1,
                                    int64_t groups = 1);

/// A convolution's reduction per output value: input channels per group x window taps.
inline int64_t reduction_size(const WindowGeometry& g) {
  return g.in_channels / g.groups * g.window_height * g.window_width;
}

/// An activation: one of Keras 3's built-ins, with the parameters of the layer forms (ReLU's
/// negative_slope and max_value, LeakyReLU's slope, ELU's alpha).
struct Activation {
  enum Kind {
    linear, relu, sigmoid, tanh, softmax, log_softmax, elu, selu, gelu, silu, mish, softplus,
    softsign, hard_sigmoid, hard_silu, exponential
  };
  /// Keras' defaults for `kind` (elu's alpha 1).
  Activation(Kind which = linear);  // NOLINT: implicit, as Activation::relu reads
  Kind kind;
  /// relu: the slope below zero (leaky_relu: 0.2); elu: alpha.
  float alpha = 0;
  /// relu: the cap (relu6: 6); infinity for none.
  float max_value;
  bool operator==(const Activation&) const = default;
};

/// Keras' names: linear, relu, relu6, leaky_relu, elu, selu, gelu, silu (swish), mish,
/// softplus, softsign, sigmoid, hard_sigmoid, hard_silu (hard_swish), tanh, exponential,
/// softmax, log_softmax.
Activation parse_activation(const std::string& name);
/// The Keras name of a built-in (relu with max_value 6 is "relu6").
std::string activation_name(const Activation& activation);
/// True when the gradient follows from the activation's output alone: the activation can then
/// run inside the kernel before it (a convolution's post-op, a merge in place) and backward
/// needs no copy of its input.
bool backward_from_output(const Activation& activation);

}  // namespace tenfold::kernels
