#include "kernels/window.h"

#include <algorithm>

#include "core/error.h"

namespace tenfold::kernels {

Padding parse_padding(const std::string& name) {
  if (name == "valid") return Padding::valid;
  if (name == "same") return Padding::same;
  throw Error(ErrorCode::invalid_argument,
              "padding '" + name + "' is not supported; use 'valid' or 'same'");
}

const char* padding_name(Padding padding) {
  switch (padding) {
    case Padding::valid: return "valid";
    case Padding::same: return "same";
  }
  return "valid";
}

namespace {

struct Axis {
  int64_t out, pad_before, pad_after;
};

Axis window_axis(int64_t in, int64_t window, int64_t stride, Padding padding,
                 const char* axis_name) {
  check_argument(window > 0 && stride > 0, std::string("window and stride along ") + axis_name +
                                               " must be positive");
  switch (padding) {
    case Padding::valid: {
      check_argument(in >= window, std::string("input ") + axis_name + " " + std::to_string(in) +
                                       " is smaller than the window " + std::to_string(window) +
                                       " with padding='valid'; use padding='same' or a "
                                       "smaller kernel");
      return {(in - window) / stride + 1, 0, 0};
    }
    case Padding::same: {
      int64_t out = (in + stride - 1) / stride;
      int64_t total = std::max<int64_t>((out - 1) * stride + window - in, 0);
      return {out, total / 2, total - total / 2};
    }
  }
  return {0, 0, 0};
}

}  // namespace

WindowGeometry make_window_geometry(int64_t batch, int64_t in_height, int64_t in_width,
                                    int64_t in_channels, int64_t out_channels,
                                    int64_t window_height, int64_t window_width,
                                    int64_t stride_height, int64_t stride_width, Padding padding) {
  WindowGeometry g;
  g.batch = batch;
  g.in_height = in_height;
  g.in_width = in_width;
  g.in_channels = in_channels;
  g.out_channels = out_channels;
  g.window_height = window_height;
  g.window_width = window_width;
  g.stride_height = stride_height;
  g.stride_width = stride_width;
  Axis rows = window_axis(in_height, window_height, stride_height, padding, "height");
  Axis cols = window_axis(in_width, window_width, stride_width, padding, "width");
  g.out_height = rows.out;
  g.pad_top = rows.pad_before;
  g.pad_bottom = rows.pad_after;
  g.out_width = cols.out;
  g.pad_left = cols.pad_before;
  g.pad_right = cols.pad_after;
  return g;
}

Activation parse_activation(const std::string& name) {
  if (name == "linear" || name.empty()) return Activation::linear;
  if (name == "relu") return Activation::relu;
  if (name == "sigmoid") return Activation::sigmoid;
  if (name == "tanh") return Activation::tanh;
  if (name == "softmax") return Activation::softmax;
  throw Error(ErrorCode::invalid_argument, "activation '" + name +
                                               "' is not supported; use one of linear, relu, "
                                               "sigmoid, tanh, softmax");
}

const char* activation_name(Activation activation) {
  switch (activation) {
    case Activation::linear: return "linear";
    case Activation::relu: return "relu";
    case Activation::sigmoid: return "sigmoid";
    case Activation::tanh: return "tanh";
    case Activation::softmax: return "softmax";
  }
  return "linear";
}

}  // namespace tenfold::kernels
