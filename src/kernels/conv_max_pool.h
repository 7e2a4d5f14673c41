#pragma once
// A first layer's Conv2D, its relu and a 2x2 max pooling at stride 2 in one pass (the first
// block of most small CNNs: the recipe's 1 -> 32 3x3, a CIFAR net's 3 -> 32): each pooling
// window's four convolution outputs are computed in registers, 16 filters to a vector, and only
// the pooled output and its argmax are stored. The chunked fused step (layers/fusion.cpp)
// writes the convolution's whole output and reads it back for the pooling, forward and backward;
// and oneDNN runs a reduction of 9 to 36 values at a fraction of its peak. Backward computes the
// weight gradient straight from the pooled gradient: each window's gradient goes to the input
// under its maximum only. Float32 input and weights (rounded to bfloat16 under a bfloat16
// output), float32 sums, a float32 or bfloat16 output.
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "kernels/onednn/engine.h"
#include "kernels/window.h"

namespace tenfold::kernels {

class ConvMaxPoolKernel {
 public:
  /// Whether this kernel computes convolution `conv` (at most 4 input channels, filters a
  /// multiple of 16, stride 1, no dilation or groups, no input gradient wanted) with
  /// `activation` (relu or linear) and max pooling `pool` (2x2 windows at stride 2, unpadded).
  static bool handles(const WindowGeometry& conv, const WindowGeometry& pool, const Activation& activation,
                      bool need_diff_src);

  /// `stored_weights` is the layout the kernel's weights are stored in and their gradients
  /// written in; `dtype` the output's and its gradient's.
  ConvMaxPoolKernel(const WindowGeometry& conv, const WindowGeometry& pool, const Activation& activation,
                    bool use_bias, const onednn::memory::desc& stored_weights, DType dtype);

  /// src [N,H,W,C] float32 -> dst [N,PH,PW,F], the activation's maximum over each window, and
  /// argmax [N,PH,PW,F], its position (row by row, 0..3; the first of equal values).
  void forward(const float* src, const float* weights, const float* bias, void* dst, uint8_t* argmax);
  /// The weight and bias gradients (overwritten; diff_bias ignored without bias) from the
  /// pooled output's gradient diff_dst, with src, dst and argmax as forward left them.
  void backward_weights(const float* src, const void* dst, const void* diff_dst, const uint8_t* argmax,
                        float* diff_weights, float* diff_bias);

 private:
  /// One image of src, zero-padded as the convolution pads it, in a thread's buffer.
  const float* padded_image(const float* src, int64_t n, std::vector<float>& padded) const;
  template <typename Element>
  void forward_in(const float* src, const float* weights, const float* bias, Element* dst, uint8_t* argmax);
  template <typename Element>
  void backward_in(const float* src, const Element* dst, const Element* diff_dst, const uint8_t* argmax);

  WindowGeometry conv_, pool_;
  DType dtype_;
  bool use_bias_, relu_;
  int64_t padded_width_, padded_rows_;
  int64_t taps_;                      // KH x KW x C, Keras' order of the kernel's rows
  std::vector<int64_t> tap_offsets_;  // each tap's input element from its output pixel's
  onednn::WeightsForPrimitive keras_weights_;   // stored -> [KH, KW, C, F]
  onednn::BoundPrimitive gradients_to_stored_;  // [KH, KW, C, F] -> stored (none when the same)
  std::vector<float> keras_gradients_, bias_gradients_, zero_bias_;
};

}  // namespace tenfold::kernels
