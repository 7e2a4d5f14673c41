#pragma once
// JPEG images through libjpeg-turbo, the library TensorFlow's decode_jpeg uses, with the same
// settings (decode_jpeg's default fast integer DCT, fancy upsampling), so pixels match Keras'
// image loading. Sizes in the header are checked against a limit before anything is allocated from them.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tenfold::datasets {

/// True when `bytes` start with JPEG's start-of-image marker.
bool is_jpeg(const std::vector<uint8_t>& bytes);

/// Decodes JPEG bytes to uint8 [height, width, channels], channels 1 (libjpeg's luminance, as
/// TensorFlow's channels=1) or 3 (RGB; grayscale files repeated). JPEG has no alpha: 4
/// channels is an error naming the file. `name` (a path) is only for error messages.
Tensor decode_jpeg(const std::vector<uint8_t>& bytes, int channels, const std::string& name);

}  // namespace tenfold::datasets
