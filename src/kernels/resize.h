#pragma once
// tf.image.resize as Keras' Resizing and CenterCrop use it (antialias off): a window of each
// NHWC image resized to out_height x out_width with half-pixel centres, bilinear (edges
// clamped) or nearest (floor). The backward pass is the adjoint.
#include <cstdint>

#include "kernels/image_transform.h"

namespace tenfold::kernels {

struct ResizeGeometry {
  int64_t batch = 0, in_height = 0, in_width = 0, channels = 0;
  /// The window of the input that is resized: rows [top, top + window_height), columns
  /// [left, left + window_width).
  int64_t top = 0, left = 0, window_height = 0, window_width = 0;
  int64_t out_height = 0, out_width = 0;
  Interpolation interpolation = Interpolation::bilinear;
};

void resize_images(const float* src, float* dst, const ResizeGeometry& g);
/// diff_src (overwritten, zero outside the window) from diff_dst.
void resize_images_backward(const float* diff_dst, float* diff_src, const ResizeGeometry& g);

}  // namespace tenfold::kernels
