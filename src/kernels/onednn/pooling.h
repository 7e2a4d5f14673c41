#pragma once
// Max and average pooling over NHWC, on oneDNN or, for windows that tile the input, on
// kernels/tiling_pool.h. Max pooling's forward writes a workspace (the argmax of each window)
// that its backward reads; the caller owns it, so one kernel can run
// several batch chunks and keep each chunk's workspace.
#include <memory>
#include <string>
#include <vector>

#include "kernels/onednn/engine.h"
#include "kernels/reference/pooling.h"
#include "kernels/window.h"

namespace tenfold::kernels::onednn {

using reference::PoolKind;

class PoolingKernel {
 public:
  /// Over activations of `dtype`, float32 or bfloat16; max pooling over tiling windows may
  /// write (and take the gradient in) another `output_dtype`. Measured on the recipe's model
  /// under mixed_bfloat16 (2 replicas): converting while pooling 50k samples/s, pooling into a
  /// float32 buffer converted after 47k.
  PoolingKernel(PoolKind kind, const WindowGeometry& g, DType dtype = DType::float32);
  PoolingKernel(PoolKind kind, const WindowGeometry& g, DType dtype, DType output_dtype);

  /// Bytes of workspace one forward writes (0 for average pooling).
  size_t workspace_bytes() const { return workspace_bytes_; }
  /// src [N,H,W,C] -> dst [N,OH,OW,C]; writes `workspace` for the backward.
  void forward(const void* src, void* dst, void* workspace);
  /// diff_dst -> diff_src, reading the workspace its forward wrote.
  void backward(const void* diff_dst, void* diff_src, const void* workspace);
  /// The implementation picked for each primitive.
  std::vector<std::string> implementations() const;

 private:
  // Windows that tile the input run on kernels/tiling_pool.h: max pooling, and average pooling
  // when unpadded (oneDNN's backward took 2 ms for LeNet's 256x28x28x6; its bfloat16 forward
  // 2.7x its float32 one).
  WindowGeometry geometry_;
  DType dtype_, output_dtype_;
  bool tiling_max_ = false, tiling_average_ = false;
  BoundPrimitive forward_, backward_;
  size_t workspace_bytes_ = 0;
  std::shared_ptr<std::byte> scratchpad_;
};

}  // namespace tenfold::kernels::onednn
