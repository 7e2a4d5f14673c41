#pragma once
// Winograd's F(2x2, 3x3) convolution (Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2015) in float32 on NHWC activations, for CPUs where oneDNN has no Winograd kernel
// (oneDNN 2.6 has them for AVX-512 only). Each 2x2 block of outputs comes from a 4x4 tile of
// input: transformed (B^T d B, 16 values per channel) and multiplied position by position with
// the transformed kernel (G g G^T), a 3x3 convolution's 36 products per pair of channels and 2x2
// outputs become 16 (2.25x fewer), computed as 16 matrix products [tiles x C] x [C x F]; A^T m A
// turns the 16 sums back into the 2x2 outputs. Tiles go in chunks whose transformed values stay
// in cache. The input gradient is the same algorithm on the output gradient, with the kernel
// flipped and its channels swapped; the weight gradient is the sum over tiles of the transformed
// input times the transformed output gradient (A dy A^T), 16 products [C x tiles] x [tiles x F],
// turned back by G^T s G. The transforms multiply by 1 and 1/2 only.
#include <cstdint>
#include <vector>

#include "kernels/window.h"

namespace tenfold::kernels {

class WinogradConv2DKernel {
 public:
  /// Whether this kernel computes `g`: a 3x3 window at stride 1, no dilation or groups, input
  /// and output channels whole vectors (multiples of vectors::lanes).
  static bool handles(const WindowGeometry& g);

  /// `chunk_tiles`: tiles per chunk (0: as many as keep a chunk's transformed values within
  /// 256 KiB, and at least 32).
  explicit WinogradConv2DKernel(const WindowGeometry& g, int64_t chunk_tiles = 0);

  /// The kernel [3, 3, C, F] (Keras' layout), transformed for forward and backward_data, which
  /// read it until the next call.
  void set_weights(const float* kernel);
  /// src [N, H, W, C] -> dst [N, OH, OW, F]: the convolution plus `bias` (may be null), then
  /// max(0, .) with `relu`.
  void forward(const float* src, const float* bias, bool relu, float* dst);
  /// The output's gradient diff_dst [N, OH, OW, F] -> the input's diff_src [N, H, W, C].
  void backward_data(const float* diff_dst, float* diff_src);
  /// The kernel's gradient [3, 3, C, F] from src and diff_dst, overwritten.
  void backward_weights(const float* src, const float* diff_dst, float* diff_kernel);

 private:
  /// One convolution the algorithm runs: forward, or backward-data (input and output swapped).
  struct Pass {
    int64_t in_height, in_width, in_channels, out_height, out_width, out_channels, pad_top,
        pad_left;
    int64_t tiles_high, tiles_wide;  // 2x2 output tiles per column and row of an image
  };
  /// The 16 transformed input values of each of tiles [first, first + count), as rows of
  /// `transformed` [16][count][in_channels].
  void transform_input(const Pass& pass, const float* src, int64_t first, int64_t count,
                       float* transformed) const;
  /// The same for diff_dst's 2x2 output tiles (zero past an odd size's edge): A dy A^T, rows of
  /// [16][count][out_channels].
  void transform_gradient(const float* diff_dst, int64_t first, int64_t count,
                          float* transformed) const;
  /// `pass` over `src` into `dst` with kernel `weights` [16][in][out], bias and relu.
  void run(const Pass& pass, const float* src, const float* weights, const float* bias, bool relu,
           float* dst);
  int64_t tiles(const Pass& pass) const;  // in the batch
  /// The threads a parallel region runs: OpenMP's, at most as many as were made buffers for.
  int threads() const;

  WindowGeometry g_;
  Pass forward_, backward_;
  int64_t chunk_tiles_;
  std::vector<float> forward_weights_, backward_weights_;  // [16][C][F] and [16][F][C]
  std::vector<float> zeros_;                               // what a tile reads outside the image
  // Per thread, made once: a chunk's transformed inputs and their products, and (weight
  // gradient) the 16 sums [C][F] over the thread's tiles.
  std::vector<std::vector<float>> transformed_, products_, sums_;
};

}  // namespace tenfold::kernels
