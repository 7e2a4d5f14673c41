#include "kernels/onednn/conv2d_transpose.h"

#include "kernels/column_sums.h"

namespace tenfold::kernels::onednn {

Conv2DTransposeKernel::Conv2DTransposeKernel(const WindowGeometry& mirrored, Activation activation, bool use_bias,
                                             const memory::desc& stored_weights, bool need_diff_src)
    : conv_(mirrored, Activation::linear, false, stored_weights, true),
      use_bias_(use_bias),
      need_diff_src_(need_diff_src),
      rows_(mirrored.batch * mirrored.in_height * mirrored.in_width),
      channels_(mirrored.in_channels),
      activation_(activation, rows_, channels_) {}

void Conv2DTransposeKernel::forward(const void* src, const float* weights, const float* bias, void* output) {
  float* dst = static_cast<float*>(output);
  conv_.backward_data(src, weights, dst);
  if (use_bias_) {
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < rows_; ++row) {
      for (int64_t c = 0; c < channels_; ++c) dst[row * channels_ + c] += bias[c];
    }
  }
  activation_.forward(dst, dst);
}

void Conv2DTransposeKernel::backward(const void* src, const void* dst, void* diff_dst, const float* weights,
                                     void* diff_src, float* diff_weights, float* diff_bias) {
  activation_.backward(nullptr, dst, diff_dst, diff_dst);
  if (use_bias_ && diff_bias) column_sums(static_cast<const float*>(diff_dst), rows_, channels_, diff_bias, false);
  conv_.backward_weights(diff_dst, src, diff_weights, nullptr, false);
  if (need_diff_src_ && diff_src) conv_.forward(diff_dst, weights, nullptr, diff_src);
}

}  // namespace tenfold::kernels::onednn
