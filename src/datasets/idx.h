#pragma once
// IDX files (the MNIST format), raw or gzip-compressed. The header is validated before anything
// is allocated from it: magic, dimensions, and header + payload == file size, with
// overflow-checked arithmetic.
#include <string>

#include "core/tensor.h"

namespace tenfold::datasets {

/// Reads an unsigned-byte IDX file (.gz or raw) into a uint8 tensor of its dimensions.
Tensor read_idx(const std::string& path);

/// uint8 images [N, H, W] -> float32 [N, H, W, 1] multiplied by `scale` (1/255 as the recipe).
Tensor images_to_float(const Tensor& images, float scale);
/// uint8 labels [N] -> int32 [N].
Tensor labels_to_int32(const Tensor& labels);

}  // namespace tenfold::datasets
