#pragma once
// PNG images through libpng. Sizes in the header are checked against a limit before anything is
// allocated from them, so a hostile file cannot ask for gigabytes.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tenfold::datasets {

/// Decodes PNG bytes to uint8 [height, width, channels] with channels 1 (gray), 3 (RGB) or
/// 4 (RGBA), converting as TensorFlow's decode_image does (checked against it in
/// tests/data/test_image_directory.cpp): gray is repeated into RGB, RGB to gray weighs
/// 0.299 R + 0.587 G + 0.114 B, an opaque alpha is added or alpha dropped, 16-bit samples keep
/// their high byte.
/// `name` (a path) is only for error messages.
Tensor decode_png(const std::vector<uint8_t>& bytes, int channels, const std::string& name);

/// Reads and decodes a PNG file.
Tensor read_png(const std::string& path, int channels);

}  // namespace tenfold::datasets
