#pragma once
// Pairs of layers that run faster as one step. A merge layer (Add, ...) followed by an
// Activation: the activation runs in place on the merge's output, saving a pass over memory
// forward and backward (a residual block's Add then relu); BatchNormalization followed by a
// ReLU, the same in the normalization's passes (kernels/batch_norm.h). Conv2D followed by
// MaxPooling2D: the convolution
// output is the largest tensor of a CNN (the recipe's: 44 MB at batch 512), and making it in
// full then reading it back is memory-bound. The fused step runs both layers over chunks of the
// batch small enough to stay in cache, and never stores the convolution output at all: the
// activation's derivative is taken at each window's maximum from the pooled output (valid for
// any increasing activation), and the pooling backward feeds the convolution backward chunk by
// chunk. A first layer with a 3x3 kernel on one channel into whole vectors of filters, with
// relu or none (the recipe's), runs kernels/direct_conv.h instead: each pooling window's convolution in registers, over the
// whole batch.
#include <memory>

#include "layers/layer.h"

namespace tenfold {

/// A fused step for (first, second), `first` called on inputs of `input_shapes` and `second`
/// on its output, or null when the pair has no faster fused form.
std::unique_ptr<LayerStep> compile_fused(Layer& first, Layer& second, const std::vector<Shape>& input_shapes,
                                         const CompileOptions& options);

}  // namespace tenfold
