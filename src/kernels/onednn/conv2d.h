#pragma once
// 2-D convolution on oneDNN: NHWC activations, weights in the layout oneDNN chooses (blocked,
// so the jit/brgemm kernels run; plain HWIO would fall back to im2col, 16x slower), optional
// fused elementwise activation. Forward, backward-data and backward-weights live together.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/onednn/activation.h"
#include "kernels/onednn/engine.h"
#include "kernels/onednn/matmul_weight_gradients.h"
#include "kernels/winograd_conv.h"
#include "kernels/window.h"

namespace tenfold::kernels::onednn {

/// Whether oneDNN has Winograd convolution kernels on this CPU (oneDNN 2.6: AVX-512 only).
bool winograd_available();

class Conv2DKernel {
 public:
  /// How the weight gradient is computed. `fastest` times the alternatives a geometry has once
  /// per process and geometry: a bfloat16 first layer over few channels (a reduction below 64)
  /// runs oneDNN's bfloat16 or float32 kernel on the same values; any other bfloat16 one
  /// without groups oneDNN's backward-weights or matmuls (MatmulWeightGradients). `bfloat16` and
  /// `float32` force oneDNN's backward-weights, `matmul` the matmuls. `none`: no weight gradient
  /// is wanted (inference, a frozen layer), so no backward-weights primitive is made and
  /// backward computes none.
  enum class WeightGradients { fastest, bfloat16, float32, matmul, none };
  /// The algorithm: `chosen` takes Winograd's where one may run (conv2d.cpp's winograd_method)
  /// and time_methods finds it faster, once per process and geometry, oneDNN's direct one
  /// elsewhere; the others force one (bench/conv_methods.cpp times both): `winograd` oneDNN's,
  /// `tenfold_winograd` WinogradConv2DKernel (F(2x2, 3x3), for CPUs where oneDNN has none).
  enum class Method { chosen, direct, winograd, tenfold_winograd };

  struct MethodSeconds {
    double forward = 0, backward = 0;
    double total() const { return forward + backward; }
  };
  /// A direct and a Winograd kernel (oneDNN's where it has one, else Tenfold's) made with these
  /// arguments, each running a training step's forward and backward on zeroed buffers, in turns,
  /// `rounds` times: each one's best, direct's first. Empty where neither has a Winograd kernel
  /// for the shape.
  static std::vector<MethodSeconds> time_methods(const WindowGeometry& g, Activation activation, bool use_bias,
                                                 const memory::desc& stored_weights, bool need_diff_src,
                                                 WeightGradients weight_gradients, int rounds);

  /// The weight layout oneDNN runs fastest with for this geometry.
  static memory::desc preferred_weights_desc(const WindowGeometry& g);
  /// Keras' layout of the same weights: [KH, KW, in, filters].
  static memory::desc keras_weights_desc(const WindowGeometry& g);

  /// `activation` must be fusable (not softmax). `stored_weights` is the layout the weights
  /// are stored in (and their gradients written in); `need_diff_src` is false for a first
  /// layer, whose input needs no gradient. `dtype` is the activations' and their gradients'
  /// (float32 or bfloat16); weights, bias and their gradients are float32 either way. With
  /// `bfloat16_weights` a float32 kernel reads its weights rounded to bfloat16 (it stands in
  /// for a bfloat16 one).
  Conv2DKernel(const WindowGeometry& g, Activation activation, bool use_bias,
               const memory::desc& stored_weights, bool need_diff_src, DType dtype = DType::float32,
               bool bfloat16_weights = false, WeightGradients weight_gradients = WeightGradients::fastest,
               Method method = Method::chosen);

  /// The implementation oneDNN picked for each primitive, e.g. "forward brg:avx512_core".
  std::vector<std::string> implementations() const;
  /// Whether Winograd's algorithm runs, oneDNN's or Tenfold's (oneDNN's direct one otherwise).
  bool winograd() const { return winograd_ || tenfold_winograd_.has_value(); }
  /// A Winograd kernel copies its input and output to and
  /// from oneDNN's blocked layout (nChw16c; the same bytes as NHWC for 16 channels, which are
  /// not copied) in a scratch of this many bytes (0 for the others), bound before the first
  /// call; nothing in it is kept between calls.
  size_t scratch_bytes() const;
  void bind_scratch(std::byte* scratch);

  /// src [N,H,W,C] -> dst [N,OH,OW,F], activation applied. With `reuse_weights`, the weights
  /// as the previous call converted them (a later chunk of one step: cast once per step).
  void forward(const void* src, const float* weights, const float* bias, void* dst, bool reuse_weights = false);
  /// All of the backward: activation (in place on diff_dst), data (diff_src may be null when
  /// need_diff_src was false) and weights (diff_bias ignored without bias; both ignored with
  /// WeightGradients::none).
  void backward(const void* src, const void* dst, void* diff_dst, const float* weights,
                void* diff_src, float* diff_weights, float* diff_bias);

  /// The activation's backward, in place: diff_dst becomes the gradient before activation.
  void activation_backward(const void* dst, void* diff_dst);
  /// diff_dst (before activation) -> diff_src; `reuse_weights` as forward's.
  void backward_data(const void* diff_dst, const float* weights, void* diff_src, bool reuse_weights = false);
  /// diff_dst (before activation) -> weight and bias gradients, overwritten or, with
  /// `accumulate`, added to (for a batch run in chunks).
  void backward_weights(const void* src, const void* diff_dst, float* diff_weights,
                        float* diff_bias, bool accumulate);

 private:
  bool use_bias_;
  DType dtype_;
  int64_t rows_, channels_;  // diff_dst seen as [N * OH * OW, F]
  BoundPrimitive forward_, backward_data_, backward_weights_;
  WeightsForPrimitive forward_weights_, backward_data_weights_;
  // backward-weights writes its own layout; these reorders move it into the weights' layout,
  // overwriting or adding.
  BoundPrimitive to_weights_layout_, add_to_weights_layout_;
  std::shared_ptr<std::byte> own_diff_weights_;
  // Where faster: the weight gradient as matmuls (backward_weights_ then only timed against it).
  std::optional<MatmulWeightGradients> matmul_weight_gradients_;
  // A bfloat16 first layer whose weight gradient runs faster in float32: its input and output
  // gradient converted (src_elements_ values of input).
  std::shared_ptr<std::byte> float_src_, float_diff_dst_;
  int64_t src_elements_ = 0;
  ActivationKernel activation_;
  std::shared_ptr<std::byte> scratchpad_;
  /// backward_data from `conv_diff_dst`, diff_dst as the primitive reads it (blocked for
  /// Winograd).
  void data_gradient(const void* conv_diff_dst, const float* weights, void* diff_src, bool reuse_weights);
  /// backward_weights, with diff_dst also as the primitive reads it (`conv_diff_dst`).
  void weight_gradients(const void* src, const void* diff_dst, const void* conv_diff_dst, float* diff_weights,
                        float* diff_bias, bool accumulate);
  // Winograd: copies of src (and diff_src) and dst (and diff_dst) in the blocked layout, where
  // it differs from NHWC (the copies are empty where it does not).
  bool winograd_ = false;
  /// `nhwc` as the Winograd primitives read it: its `copy` into `to`, or itself.
  static const void* blocked(BoundPrimitive& copy, const void* nhwc, std::byte* to);
  /// Where a Winograd primitive writes what ends in `nhwc`: `to` when `copy_back` copies it
  /// there afterwards, `nhwc` itself otherwise.
  static void* blocked_output(const BoundPrimitive& copy_back, void* nhwc, std::byte* to);
  /// Copies a Winograd primitive's `output` (from blocked_output) into `nhwc`, if it is not there.
  static void copy_back(BoundPrimitive& copy, void* output, void* nhwc);
  BoundPrimitive src_to_blocked_, dst_to_blocked_, blocked_to_src_, blocked_to_dst_;
  size_t blocked_src_bytes_ = 0, blocked_dst_bytes_ = 0;
  std::byte* blocked_src_ = nullptr;
  std::byte* blocked_dst_ = nullptr;
  // Tenfold's Winograd kernel, where it runs instead of the primitives (the weight gradient too,
  // unless matmuls compute it): it reads the weights in Keras' layout, transformed when they
  // change; a relu in its last pass, other activations after it.
  std::optional<WinogradConv2DKernel> tenfold_winograd_;
  WeightsForPrimitive keras_weights_;
  bool relu_in_winograd_ = false;
  /// tenfold_winograd_'s weights from the stored ones, transformed unless `reuse_weights`.
  void set_winograd_weights(const float* weights, bool reuse_weights);
};

}  // namespace tenfold::kernels::onednn
