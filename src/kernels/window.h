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
};

/// Keras/TensorFlow semantics: 'valid' has no padding, out = (in - window) / stride + 1;
/// 'same' gives out = ceil(in / stride), padding split with the extra row/column at the end.
WindowGeometry make_window_geometry(int64_t batch, int64_t in_height, int64_t in_width,
                                    int64_t in_channels, int64_t out_channels,
                                    int64_t window_height, int64_t window_width,
                                    int64_t stride_height, int64_t stride_width, Padding padding);

/// Activations a layer can apply to its output; fused into convolution and dense kernels.
enum class Activation { linear, relu, sigmoid, tanh, softmax };

Activation parse_activation(const std::string& name);
const char* activation_name(Activation activation);

}  // namespace tenfold::kernels
