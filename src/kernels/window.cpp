#include "kernels/window.h"

#include <algorithm>
#include <limits>
#include <vector>

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
                                    int64_t stride_height, int64_t stride_width, Padding padding,
                                    int64_t dilation_height, int64_t dilation_width, int64_t groups) {
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
  g.dilation_height = dilation_height;
  g.dilation_width = dilation_width;
  g.groups = groups;
  Axis rows = window_axis(in_height, (window_height - 1) * dilation_height + 1, stride_height, padding, "height");
  Axis cols = window_axis(in_width, (window_width - 1) * dilation_width + 1, stride_width, padding, "width");
  g.out_height = rows.out;
  g.pad_top = rows.pad_before;
  g.pad_bottom = rows.pad_after;
  g.out_width = cols.out;
  g.pad_left = cols.pad_before;
  g.pad_right = cols.pad_after;
  return g;
}

Activation::Activation(Kind which)
    : kind(which), alpha(which == elu ? 1.0f : 0.0f), max_value(std::numeric_limits<float>::infinity()) {}

namespace {

struct NamedActivation {
  const char* name;
  Activation activation;
};

std::vector<NamedActivation> builtin_activations() {
  Activation relu6(Activation::relu), leaky_relu(Activation::relu);
  relu6.max_value = 6;
  leaky_relu.alpha = 0.2f;
  return {{"linear", Activation::linear},   {"relu", Activation::relu},
          {"relu6", relu6},                 {"leaky_relu", leaky_relu},
          {"elu", Activation::elu},         {"selu", Activation::selu},
          {"gelu", Activation::gelu},       {"silu", Activation::silu},
          {"swish", Activation::silu},      {"mish", Activation::mish},
          {"softplus", Activation::softplus}, {"softsign", Activation::softsign},
          {"sigmoid", Activation::sigmoid}, {"hard_sigmoid", Activation::hard_sigmoid},
          {"hard_silu", Activation::hard_silu}, {"hard_swish", Activation::hard_silu},
          {"tanh", Activation::tanh},       {"exponential", Activation::exponential},
          {"softmax", Activation::softmax}, {"log_softmax", Activation::log_softmax}};
}

}  // namespace

Activation parse_activation(const std::string& name) {
  if (name.empty()) return Activation::linear;
  std::string known;
  for (const NamedActivation& builtin : builtin_activations()) {
    if (name == builtin.name) return builtin.activation;
    known += std::string(known.empty() ? "" : ", ") + builtin.name;
  }
  throw Error(ErrorCode::invalid_argument,
              "activation '" + name + "' is not supported; use one of " + known);
}

std::string activation_name(const Activation& activation) {
  for (const NamedActivation& builtin : builtin_activations()) {
    if (builtin.activation == activation) return builtin.name;
  }
  // A parameterised form (a ReLU or ELU layer's): its layer's config holds the parameters.
  for (const NamedActivation& builtin : builtin_activations()) {
    if (builtin.activation.kind == activation.kind) return builtin.name;
  }
  return "linear";
}

bool backward_from_output(const Activation& activation) {
  switch (activation.kind) {
    case Activation::linear:
    case Activation::relu:
    case Activation::sigmoid:
    case Activation::tanh:
    case Activation::elu:
    case Activation::exponential:
      return true;
    default:
      return false;
  }
}

}  // namespace tenfold::kernels
