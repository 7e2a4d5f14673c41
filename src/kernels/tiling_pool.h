#pragma once
// Pooling whose windows tile the input (stride = window, the 2x2/2 of most CNNs): each input
// pixel lies in at most one window. Plain loops over NHWC, vectorized across channels. oneDNN's
// jit pooling costs ~175 us per call on a 12x26x26x32 chunk of the recipe's fused
// convolution (1 thread), 7 of its 18 ms per replica step; these loops run at memory speed.
#include <cstdint>

#include "core/tensor.h"
#include "kernels/window.h"

namespace tenfold::kernels {

/// True when the windows of `g` do not overlap (stride = window size in both directions) and
/// are small enough for a one-byte argmax.
bool windows_tile(const WindowGeometry& g);

/// src [N,H,W,C] -> dst [N,OH,OW,C], the maximum of each window (padding ignored), and
/// argmax [N,OH,OW,C]: the position kh * window_width + kw of the first maximum. Each of src
/// and dst is float32 or bfloat16 (max pooling only moves values; a float32 source is
/// compared once rounded to a bfloat16 dst).
void tiling_max_forward(const WindowGeometry& g, const void* src, DType src_dtype, void* dst, DType dst_dtype,
                        uint8_t* argmax);
/// diff_src (overwritten): each window's gradient at its argmax, zero elsewhere.
void tiling_max_backward(const WindowGeometry& g, const void* diff_dst, DType diff_dst_dtype, const uint8_t* argmax,
                         void* diff_src, DType diff_src_dtype);
/// dst of average pooling without padding: each window's mean (summed in float32).
void tiling_average_forward(const WindowGeometry& g, const void* src, void* dst, DType dtype);
/// diff_src (overwritten) of average pooling without padding: each window's gradient / size.
void tiling_average_backward(const WindowGeometry& g, const void* diff_dst, void* diff_src, DType dtype);

}  // namespace tenfold::kernels
