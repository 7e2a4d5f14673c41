#pragma once
// A first layer's convolution from an image's few channels into few filters (LeNet's 1 -> 6
// 5x5), forward and weight gradients (a first layer's input needs none), both direct on a vector
// of pixels of an output row at a time (16 on AVX-512, 8 on AVX2; the weight gradient up to 6
// filters, oneDNN's past that, see few_channel_conv.cpp). oneDNN works on blocks of 16 filters
// and channels and runs such shapes slower: LeNet's first layer + tanh on 256 images, 1
// thread, forward 1.4 ms vs oneDNN's 3.6, backward 1.8 vs 2.6 (float32; bfloat16 1.8 / 1.4 vs
// 2.9 / 3.1: `OMP_NUM_THREADS=1 build/tenfold-bench-few-channel`). The activation runs on a group of
// images' output while it is in cache. Float32 or bfloat16 data (NHWC), float32 sums, stride
// 1; in bfloat16 the weights are rounded to bfloat16.
#include <memory>
#include <optional>
#include <vector>

#include "kernels/onednn/activation.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/onednn/engine.h"
#include "kernels/window.h"

namespace tenfold::kernels {

class FewChannelConv2DKernel {
 public:
  /// Whether this kernel computes a convolution of geometry `g`: at most 4 input channels and
  /// 16 filters, stride 1, no dilation or groups, no input gradient wanted.
  static bool handles(const WindowGeometry& g, bool need_diff_src);

  /// `activation` must be fusable (as Conv2DKernel's); `stored_weights` is the layout the
  /// weights are stored in and their gradients written in. Without `need_weight_gradients`
  /// (inference, a frozen layer) backward computes nothing. `dtype` is the data's (src, dst and
  /// their gradients): float32, or bfloat16 on weights rounded to bfloat16.
  FewChannelConv2DKernel(const WindowGeometry& g, Activation activation, bool use_bias,
                         const onednn::memory::desc& stored_weights, bool need_weight_gradients,
                         DType dtype = DType::float32);

  /// src [N,H,W,C] -> dst [N,OH,OW,F], activation applied.
  void forward(const void* src, const float* weights, const float* bias, void* dst);
  /// The weight and bias gradients through the activation (diff_bias ignored without bias;
  /// diff_src must be null; diff_dst left as it is, or, past 6 filters, the activation's
  /// gradient in place as oneDNN's kernel leaves it). Nothing without need_weight_gradients.
  void backward(const void* src, const void* dst, void* diff_dst, const float* weights, void* diff_src,
                float* diff_weights, float* diff_bias);

 private:
  /// Per thread (a oneDNN primitive binds its data per call, so threads cannot share one): the
  /// activation for a group of images and for the last, smaller group, and the group's
  /// activation gradient.
  struct ThreadState {
    onednn::ActivationKernel full_group, last_group;
    std::shared_ptr<std::byte> activation_gradient;
  };
  onednn::ActivationKernel& activation_for(ThreadState& thread, int64_t images);
  template <typename Element>
  void forward_in(const Element* src, const float* weights, const float* bias, Element* dst);
  /// weight_gradients_ and diff_bias from src and the output's gradient.
  template <typename Element>
  void weight_gradients(const Element* src, const Element* dst, const Element* diff_dst, float* diff_bias);

  WindowGeometry g_;
  DType dtype_;
  bool use_bias_;
  bool direct_gradients_;  // Tenfold's weight gradient (few filters), else oneDNN's
  // NOTE: it makes a forward primitive too (oneDNN's backward primitives take a forward's as a
  // hint); that one never runs.
  std::optional<onednn::Conv2DKernel> onednn_gradients_;
  int64_t image_outputs_;  // OH x OW x F
  int64_t group_images_;   // images whose output the activation takes at once, while it is in cache
  Activation activation_;
  onednn::WeightsForPrimitive keras_weights_;         // stored -> [KH, KW, C, F]
  onednn::GradientsInKerasLayout weight_gradients_;  // [KH, KW, C, F] -> stored (direct gradients)
  std::vector<ThreadState> threads_;
  std::vector<float> zero_bias_;
};

}  // namespace tenfold::kernels
