#pragma once
// keras.utils.image_dataset_from_directory: a directory with one subdirectory per class,
//
//   flowers/daisy/1.png, flowers/daisy/2.png, flowers/tulips/1.png, ...
//
// becomes a Dataset of (image float32 [height, width, channels] in 0..255, label), batched.
// Files are listed (sorted, as Keras) when the dataset is made; images are decoded and resized
// lazily, in a parallel map, each pass. PNG and JPEG files are read (decoded by content, as
// TensorFlow's decode_image); BMP and GIF files are an error (convert them), other files are
// ignored.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"

namespace tenfold::data {

struct ImageDirectoryOptions {
  /// "int" (int32 class index), "categorical" (float32 one-hot), "binary" (float32 [1], two
  /// classes only) or "none" (images alone).
  std::string label_mode = "int";
  /// Classes in this order, each a subdirectory; by default all subdirectories, sorted.
  std::vector<std::string> class_names;
  /// "grayscale" (1 channel), "rgb" (3) or "rgba" (4).
  std::string color_mode = "rgb";
  /// Elements per batch; 0 leaves the dataset unbatched (Keras' batch_size=None).
  int64_t batch_size = 32;
  /// (height, width) every image is resized to, bilinearly as tf.image.resize.
  std::pair<int64_t, int64_t> image_size = {256, 256};
  /// Shuffles the file list once (with `seed`) and each pass through a buffer of 8 batches.
  bool shuffle = true;
  std::optional<uint64_t> seed;
  /// With a subset, this share of the (shuffled) files is held out for "validation", the rest
  /// is "training". Both datasets must be made with the same seed.
  double validation_split = 0;
  std::string subset;
};

struct ImageDirectoryDataset {
  Dataset dataset;
  std::vector<std::string> class_names;
  std::vector<std::string> file_paths;  // in the order the dataset reads them (before shuffling)
};

ImageDirectoryDataset image_dataset_from_directory(const std::string& directory,
                                                   const ImageDirectoryOptions& options = {});

/// Checks every file before any is decoded, as a command does before training: each must start
/// with a PNG or JPEG signature and end with its format's end marker (a truncated file lacks
/// it). An error names the first bad file.
void check_image_files(const std::vector<std::string>& paths);

/// tf.image.resize(image, size, "bilinear") (half-pixel centres, no antialiasing) of a uint8
/// [height, width, channels] image, to float32.
Tensor resize_bilinear(const Tensor& image, int64_t height, int64_t width);

}  // namespace tenfold::data
