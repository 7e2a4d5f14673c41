#pragma once
// A convolution's weight gradient as oneDNN matmuls: for a chunk of output pixels at a time,
// each pixel's input window is copied into a row (im2col; a chunk's rows stay in L2, whatever
// the image size), and rows^T x diff_dst is added into the [KH * KW * C, F] sums, the weights'
// HWIO layout. A 1x1
// convolution at stride 1 without padding reads its input rows in place, all in one matmul.
// On this machine's AMX, oneDNN's bfloat16 backward-weights primitive ran several times slower
// than its matmuls (Conv2DKernel times both, conv2d.cpp).
#include <memory>
#include <string>

#include "kernels/onednn/engine.h"
#include "kernels/window.h"

namespace tenfold::kernels::onednn {

class MatmulWeightGradients {
 public:
  /// `g` without groups; activations of `type` (float32 or bfloat16), NHWC.
  MatmulWeightGradients(const WindowGeometry& g, memory::data_type type);

  /// diff_weights [KH, KW, C, F] (float32) = the sum over output pixels of each pixel's input
  /// window x its diff_dst.
  void execute(const void* src, const void* diff_dst, float* diff_weights);
  /// The weight gradient's layout: oneDNN's [F, C, KH, KW] dims over HWIO's bytes.
  memory::desc diff_weights_desc() const;
  /// "matmul brg:avx512_core_amx_bf16", say (im2col added where windows are copied).
  std::string implementation() const;

 private:
  /// The matmul over a chunk of `pixels` output pixels, adding into its output.
  BoundPrimitive make_matmul(int64_t pixels) const;
  /// The windows of output pixels [first, first + count) (over all images) into rows_.
  void copy_windows(const std::byte* src, int64_t first, int64_t count);

  WindowGeometry g_;
  memory::data_type type_;
  size_t element_bytes_;
  int64_t reduction_;                // KH * KW * C: a row's values
  bool copies_;                      // false: a pointwise convolution reads src's rows
  int64_t pixels_;                   // output pixels of the batch
  int64_t chunk_pixels_;             // output pixels per chunk (the last may have fewer)
  BoundPrimitive chunk_, last_chunk_;  // last_chunk_ empty when the chunks divide the batch
  std::shared_ptr<std::byte> rows_, scratchpad_;
};

}  // namespace tenfold::kernels::onednn
