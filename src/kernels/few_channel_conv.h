#pragma once
// A first layer's convolution from an image's few channels into few filters (LeNet's 1 -> 6
// 5x5): its forward direct, an output row's pixels 16 at a time, one vector per filter kept
// in registers across the taps; its backward (the weight gradient alone: a first layer's input
// needs none) oneDNN's. oneDNN's forward works on blocks of 16 filters and runs these several
// times slower: 1 -> 6 5x5 'same' + tanh on 512 28x28 images, 1 thread, 10.5 ms vs 3.1 ms
// (+ the tanh). Float32, NHWC, stride 1; under mixed_bfloat16 it stands in for the bfloat16
// convolution, on weights rounded to bfloat16 (the model rounds the input and the output).
#include <optional>
#include <vector>

#include "kernels/onednn/activation.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/window.h"

namespace tenfold::kernels {

class FewChannelConv2DKernel {
 public:
  /// Whether this kernel computes a convolution of geometry `g`: at most 4 input channels and
  /// 16 filters, stride 1, no dilation or groups, no input gradient wanted.
  static bool handles(const WindowGeometry& g, bool need_diff_src);

  /// `activation` must be fusable (as Conv2DKernel's); `stored_weights` is the layout the
  /// weights are stored in and their gradients written in. Without `need_weight_gradients`
  /// (inference, a frozen layer) no oneDNN kernel is made and backward computes none. With
  /// `bfloat16_weights` forward reads the weights rounded to bfloat16.
  FewChannelConv2DKernel(const WindowGeometry& g, Activation activation, bool use_bias,
                         const onednn::memory::desc& stored_weights, bool need_weight_gradients,
                         bool bfloat16_weights = false);

  /// src [N,H,W,C] -> dst [N,OH,OW,F], activation applied.
  void forward(const void* src, const float* weights, const float* bias, void* dst);
  /// The activation's backward in place on diff_dst, then the weight and bias gradients
  /// (diff_bias ignored without bias; diff_src must be null): Conv2DKernel's. Nothing
  /// without need_weight_gradients.
  void backward(const void* src, const void* dst, void* diff_dst, const float* weights, void* diff_src,
                float* diff_weights, float* diff_bias);

 private:
  WindowGeometry g_;
  bool use_bias_;
  onednn::WeightsForPrimitive keras_weights_;  // stored -> [KH, KW, C, F]
  // NOTE: it makes a forward primitive too (oneDNN's backward primitives take a forward's as a
  // hint); that one never runs.
  std::optional<onednn::Conv2DKernel> backward_;
  onednn::ActivationKernel activation_;
  std::vector<float> zero_bias_;
};

}  // namespace tenfold::kernels
