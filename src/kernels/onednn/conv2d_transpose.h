#pragma once
// A transposed convolution (Keras' Conv2DTranspose) on the kernels of the convolution it
// transposes: that convolution maps the transposed one's output [N, OH, OW, F] to its input
// [N, H, W, C] with weights [KH, KW, F, C] (Keras' Conv2DTranspose kernel layout). So the
// forward pass is that convolution's backward-data, the input gradient its forward, and the
// weight gradient its backward-weights with the roles of input and output gradient swapped.
// Bias and the activation follow on the output.
#include <vector>

#include "kernels/onednn/activation.h"
#include "kernels/onednn/conv2d.h"

namespace tenfold::kernels::onednn {

class Conv2DTransposeKernel {
 public:
  /// `mirrored`: the geometry of the convolution from this layer's output to its input.
  /// `activation` must be fusable (WeightedStep's contract); it runs after the bias.
  Conv2DTransposeKernel(const WindowGeometry& mirrored, Activation activation, bool use_bias,
                        const memory::desc& stored_weights, bool need_diff_src);

  /// Activations in float32 (WeightedStep hands them untyped).
  void forward(const void* src, const float* weights, const float* bias, void* dst);
  void backward(const void* src, const void* dst, void* diff_dst, const float* weights, void* diff_src,
                float* diff_weights, float* diff_bias);
  std::vector<std::string> implementations() const { return conv_.implementations(); }
  size_t scratch_bytes() const { return conv_.scratch_bytes(); }
  void bind_scratch(std::byte* scratch) { conv_.bind_scratch(scratch); }

 private:
  Conv2DKernel conv_;
  bool use_bias_, need_diff_src_;
  int64_t rows_, channels_;  // the output seen as [N * OH * OW, F]
  ActivationKernel activation_;
};

}  // namespace tenfold::kernels::onednn
