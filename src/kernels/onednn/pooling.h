#pragma once
// Max and average pooling on oneDNN over NHWC. Max pooling keeps the forward's workspace (the
// argmax of each window) for the backward.
#include <memory>

#include "kernels/onednn/engine.h"
#include "kernels/reference/pooling.h"
#include "kernels/window.h"

namespace tenfold::kernels::onednn {

using reference::PoolKind;

class PoolingKernel {
 public:
  PoolingKernel(PoolKind kind, const WindowGeometry& g);

  /// src [N,H,W,C] -> dst [N,OH,OW,C]; records the workspace for backward.
  void forward(const float* src, float* dst);
  /// diff_dst -> diff_src, using the workspace of the last forward.
  void backward(const float* diff_dst, float* diff_src);

 private:
  BoundPrimitive forward_, backward_;
  bool has_workspace_ = false;
  std::shared_ptr<std::byte> workspace_;
  std::shared_ptr<std::byte> scratchpad_;
};

}  // namespace tenfold::kernels::onednn
