#pragma once
// A first layer's Conv2D computed directly, a vector of filters at a time (16 on AVX-512, 8 on
// AVX2: vectors.h's lanes): a 3x3 kernel on one channel (or 1x1 on up to 9) is a reduction of 9
// values, too short for oneDNN's kernels (the recipe's 1 -> 32 3x3 ran at a third of the
// machine's peak). Each unit of work is 8 sums in registers: 4 or 8 neighbours in a row for 2
// or 1 vectors of filters, or the 2x2 window of a
// max pooling right after the convolution (the first block of most small CNNs). Pooled, only
// the pooled output and its argmax are stored: the chunked fused step (layers/fusion.cpp)
// writes the convolution's whole output and reads it back, forward and backward. The
// activation (relu or none) runs in registers too. Backward computes the weight gradient (a
// first layer's input needs none), pooled straight from the pooled gradient: each window's
// gradient goes to the input under its maximum only. Float32 sums; float32 or bfloat16 data
// (weights rounded to bfloat16 under a bfloat16 output).
#include <cstdint>
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "kernels/onednn/engine.h"
#include "kernels/window.h"

namespace tenfold::kernels {

class DirectConv2DKernel {
 public:
  /// Whether this kernel computes convolution `conv` with `activation`: at most 9 taps
  /// (window x input channels), filters a multiple of 16, no dilation or groups, relu or no
  /// activation, no input gradient wanted.
  static bool handles(const WindowGeometry& conv, const Activation& activation, bool need_diff_src);
  /// The same followed by max pooling `pool`: 2x2 windows at stride 2, unpadded.
  static bool handles(const WindowGeometry& conv, const WindowGeometry& pool, const Activation& activation,
                      bool need_diff_src);

  /// `stored_weights` is the layout the kernel's weights are stored in and their gradients
  /// written in. Without `need_weight_gradients` (inference, a frozen layer) backward computes
  /// nothing. `src_dtype` is the input's, `dtype` the output's and its gradient's. With
  /// `max_pool`, the output is the pooled one.
  DirectConv2DKernel(const WindowGeometry& conv, const Activation& activation, bool use_bias,
                     const onednn::memory::desc& stored_weights, bool need_weight_gradients, DType src_dtype,
                     DType dtype, std::optional<WindowGeometry> max_pool = std::nullopt);

  /// src [N,H,W,C] -> dst [N,OH,OW,F] (the activation applied); pooled: [N,PH,PW,F], the
  /// maximum over each window, and argmax [N,PH,PW,F], its position (row by row, 0..3; the
  /// first of equal values).
  void forward(const void* src, const float* weights, const float* bias, void* dst, uint8_t* argmax = nullptr);
  /// The weight and bias gradients (overwritten; diff_bias ignored without bias) from the
  /// output's gradient diff_dst, with src, dst (and argmax) as forward left them. diff_src
  /// must be null. (WeightedStep's signature; `weights` is not needed.)
  void backward(const void* src, const void* dst, const void* diff_dst, const float* weights, void* diff_src,
                float* diff_weights, float* diff_bias, const uint8_t* argmax = nullptr);

 private:
  /// One image of src, zero-padded as the convolution pads it, in float32 in a thread's buffer.
  template <typename Source>
  const float* padded_image(const Source* src, int64_t n, std::vector<float>& padded) const;
  /// The threads for_each_image runs: OpenMP's, at most as many as were made buffers for.
  int threads() const;
  template <typename Source, typename Element>
  void forward_in(const Source* src, const float* weights, const float* bias, Element* dst, uint8_t* argmax);
  template <typename Source, typename Element>
  void backward_in(const Source* src, const Element* dst, const Element* diff_dst, const uint8_t* argmax);
  /// visit(image n padded, n, f0, std::integral_constant<int, V>) for each image (in parallel,
  /// threads() of them, OpenMP's static schedule) and group of V vectors of filters from f0.
  template <typename Source, typename Visit>
  void for_each_image(const Source* src, Visit visit);
  /// The units of `image` (pooling windows, or P pixels of a row): call(unit's padded input,
  /// unit's first output, pixels in it).
  template <int P, typename Call>
  void for_each_unit(const float* image, int64_t n, Call call) const;

  WindowGeometry conv_;
  std::optional<WindowGeometry> pool_;
  DType src_dtype_, dtype_;
  bool use_bias_, relu_, need_weight_gradients_;
  int64_t padded_width_, padded_rows_;
  int64_t taps_;                      // KH x KW x C, Keras' order of the kernel's rows
  std::vector<int64_t> tap_offsets_;  // each tap's input element from its output pixel's
  int64_t pixel_offsets_[8];          // a unit's output pixels' input elements from its first's
  onednn::WeightsForPrimitive keras_weights_;         // stored -> [KH, KW, C, F]
  onednn::GradientsInKerasLayout weight_gradients_;  // [KH, KW, C, F] -> stored
  std::vector<float> bias_gradients_, zero_bias_;
  // Per thread, made once: an image padded (its border stays zero), and the weight gradient's
  // sums [9 taps][filters] then the bias's [filters].
  std::vector<std::vector<float>> padded_;
  int64_t sums_per_thread_;
  std::vector<float> sums_;
};

}  // namespace tenfold::kernels
