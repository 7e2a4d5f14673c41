#pragma once
// Max and average pooling on oneDNN over NHWC. Max pooling's forward writes a workspace (the
// argmax of each window) that its backward reads; the caller owns it, so one kernel can run
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
  PoolingKernel(PoolKind kind, const WindowGeometry& g);

  /// Bytes of workspace one forward writes (0 for average pooling).
  size_t workspace_bytes() const { return workspace_bytes_; }
  /// src [N,H,W,C] -> dst [N,OH,OW,C]; writes `workspace` for the backward.
  void forward(const float* src, float* dst, void* workspace);
  /// diff_dst -> diff_src, reading the workspace its forward wrote.
  void backward(const float* diff_dst, float* diff_src, const void* workspace);
  /// The implementation picked for each primitive.
  std::vector<std::string> implementations() const;

 private:
  /// Average pooling's backward over windows that neither overlap nor pad: each input gets
  /// its window's gradient / window size. A plain loop at memory speed; oneDNN's jit kernel
  /// takes 10x longer with few channels (2 ms for 256x28x28x6: 2x2 windows, LeNet's first).
  void tiling_average_backward(const float* diff_dst, float* diff_src) const;

  WindowGeometry geometry_;
  bool tiling_average_ = false;
  BoundPrimitive forward_, backward_;
  size_t workspace_bytes_ = 0;
  std::shared_ptr<std::byte> scratchpad_;
};

}  // namespace tenfold::kernels::onednn
