#include "data/image_directory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/error.h"
#include "core/random.h"
#include "datasets/jpeg.h"
#include "datasets/png.h"

namespace tenfold::data {

namespace fs = std::filesystem;

namespace {

std::string lowercase_extension(const fs::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return extension;
}

/// The image files under `class_directory` (Keras' extensions), sorted by directory then name
/// (as Keras walks). BMP and GIF files are an error: Tenfold decodes PNG and JPEG.
std::vector<std::string> list_class_files(const fs::path& class_directory) {
  std::vector<std::pair<std::string, std::string>> files;  // (directory, name)
  for (const auto& entry : fs::recursive_directory_iterator(class_directory)) {
    if (!entry.is_regular_file()) continue;
    std::string extension = lowercase_extension(entry.path());
    if (extension == ".png" || extension == ".jpg" || extension == ".jpeg") {
      files.emplace_back(entry.path().parent_path().string(), entry.path().filename().string());
    } else if (extension == ".bmp" || extension == ".gif") {
      throw Error(ErrorCode::invalid_argument,
                  entry.path().string() + " is a " + extension.substr(1) +
                      " image; Tenfold reads PNG and JPEG images: convert it (e.g. `convert in" +
                      extension + " out.png`) or move it out of " + class_directory.string());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> paths;
  for (const auto& [directory, name] : files) paths.push_back((fs::path(directory) / name).string());
  return paths;
}

bool is_png(const std::vector<uint8_t>& bytes) {
  const uint8_t signature[4] = {0x89, 'P', 'N', 'G'};
  return bytes.size() >= 4 && std::equal(signature, signature + 4, bytes.begin());
}

Error not_an_image(const std::string& path) {
  return Error(ErrorCode::data_loss, path + " is neither a PNG nor a JPEG image (its first bytes are no image "
                                            "signature): a damaged or misnamed file; remove it or convert it");
}

/// Decodes a PNG or JPEG file by its content, as tf.io.decode_image does.
Tensor read_image(const std::string& path, int channels) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ErrorCode::not_found, "cannot open image " + path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (datasets::is_jpeg(bytes)) return datasets::decode_jpeg(bytes, channels, path);
  if (is_png(bytes)) return datasets::decode_png(bytes, channels, path);
  throw not_an_image(path);
}

std::vector<std::string> subdirectories(const fs::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

int channels_of(const std::string& color_mode) {
  if (color_mode == "grayscale") return 1;
  if (color_mode == "rgb") return 3;
  if (color_mode == "rgba") return 4;
  throw Error(ErrorCode::invalid_argument, "color_mode must be \"grayscale\", \"rgb\" or \"rgba\", got \"" +
                                               color_mode + "\"");
}

void check_options(const ImageDirectoryOptions& options) {
  const std::string& mode = options.label_mode;
  check_argument(mode == "int" || mode == "categorical" || mode == "binary" || mode == "none",
                 "label_mode must be \"int\", \"categorical\", \"binary\" or \"none\", got \"" +
                     mode + "\"");
  check_argument(options.batch_size >= 0, "batch_size must be >= 1 (or 0 for no batching), got " +
                                              std::to_string(options.batch_size));
  check_argument(options.image_size.first >= 1 && options.image_size.second >= 1,
                 "image_size must be two positive numbers (height, width)");
  check_argument(options.validation_split >= 0 && options.validation_split < 1,
                 "validation_split must lie in [0, 1), got " +
                     std::to_string(options.validation_split));
  check_argument(options.subset.empty() || options.subset == "training" ||
                     options.subset == "validation",
                 "subset must be \"training\" or \"validation\", got \"" + options.subset + "\"");
  check_argument(options.subset.empty() == (options.validation_split == 0),
                 "validation_split and subset go together: give both, or neither");
  check_argument(!(options.validation_split > 0 && options.shuffle && !options.seed),
                 "with validation_split and shuffle, give a seed, so the training and validation "
                 "subsets are drawn from the same order and do not overlap");
}

/// Keeps the training or validation part of (paths, labels), as Keras: validation is the last
/// int(split * count) files.
void keep_subset(const ImageDirectoryOptions& options, std::vector<std::string>& paths,
                 std::vector<int32_t>& labels) {
  if (options.subset.empty()) return;
  size_t validation = size_t(options.validation_split * double(paths.size()));
  size_t begin = options.subset == "training" ? 0 : paths.size() - validation;
  size_t end = options.subset == "training" ? paths.size() - validation : paths.size();
  paths = std::vector<std::string>(paths.begin() + ptrdiff_t(begin), paths.begin() + ptrdiff_t(end));
  labels = std::vector<int32_t>(labels.begin() + ptrdiff_t(begin), labels.begin() + ptrdiff_t(end));
  std::printf("Using %zu files for %s.\n", paths.size(), options.subset.c_str());
}

Tensor label_tensor(const std::string& label_mode, int32_t label, int64_t num_classes) {
  if (label_mode == "int") {
    Tensor tensor = Tensor::uninitialized(Shape{}, DType::int32);
    tensor.data<int32_t>()[0] = label;
    return tensor;
  }
  if (label_mode == "binary") {
    Tensor tensor = Tensor::uninitialized(Shape{1});
    tensor.data<float>()[0] = float(label);
    return tensor;
  }
  Tensor one_hot(Shape{num_classes});
  one_hot.data<float>()[label] = 1.0f;
  return one_hot;
}

std::vector<TensorSpec> element_spec_of(const ImageDirectoryOptions& options, int channels,
                                        int64_t num_classes) {
  std::vector<TensorSpec> spec = {
      {{options.image_size.first, options.image_size.second, channels}, DType::float32}};
  if (options.label_mode == "int") spec.push_back({{}, DType::int32});
  if (options.label_mode == "binary") spec.push_back({{1}, DType::float32});
  if (options.label_mode == "categorical") spec.push_back({{num_classes}, DType::float32});
  return spec;
}

}  // namespace

void check_image_files(const std::vector<std::string>& paths) {
  // The end marker may be followed by a few bytes of padding, which decoders ignore.
  constexpr std::streamoff tail_bytes = 32;
  for (const std::string& path : paths) {
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    if (!file) throw Error(ErrorCode::not_found, "cannot open image " + path);
    const std::streamoff size = file.tellg();
    std::vector<uint8_t> head(8, 0), tail(size_t(std::min(size, tail_bytes)), 0);
    file.seekg(0);
    file.read(reinterpret_cast<char*>(head.data()), std::streamsize(head.size()));
    file.seekg(size - std::streamoff(tail.size()));
    file.read(reinterpret_cast<char*>(tail.data()), std::streamsize(tail.size()));
    // JPEG ends with the EOI marker FF D9; PNG with its IEND chunk's type and CRC.
    const std::vector<uint8_t> end = datasets::is_jpeg(head) ? std::vector<uint8_t>{0xff, 0xd9}
                                     : is_png(head) ? std::vector<uint8_t>{'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82}
                                                    : std::vector<uint8_t>{};
    if (end.empty()) throw not_an_image(path);
    if (std::search(tail.begin(), tail.end(), end.begin(), end.end()) == tail.end()) {
      throw Error(ErrorCode::data_loss, path + " is truncated: its image data does not end with the format's end "
                                               "marker (an interrupted copy or download?)");
    }
  }
}

Tensor resize_bilinear(const Tensor& image, int64_t height, int64_t width) {
  const int64_t in_height = image.shape()[0], in_width = image.shape()[1], channels = image.shape()[2];
  if (height == in_height && width == in_width) {  // every sample on a pixel: the values as they are
    Tensor out = Tensor::uninitialized(image.shape());
    std::copy_n(image.data<uint8_t>(), image.num_elements(), out.data<float>());
    return out;
  }
  struct Tap {
    int64_t lower, upper;
    float lerp;
  };
  // As TensorFlow's resize_bilinear with half-pixel centres: sample at (i + 0.5) * scale - 0.5.
  auto taps = [](int64_t out_size, int64_t in_size) {
    std::vector<Tap> result(static_cast<size_t>(out_size));
    float scale = float(in_size) / float(out_size);
    for (int64_t i = 0; i < out_size; ++i) {
      float in = (float(i) + 0.5f) * scale - 0.5f;
      float in_floor = std::floor(in);
      result[size_t(i)] = {std::max<int64_t>(int64_t(in_floor), 0),
                           std::min<int64_t>(int64_t(std::ceil(in)), in_size - 1), in - in_floor};
    }
    return result;
  };
  std::vector<Tap> ys = taps(height, in_height), xs = taps(width, in_width);
  Tensor out = Tensor::uninitialized(Shape{height, width, channels});
  const uint8_t* in = image.data<uint8_t>();
  float* result = out.data<float>();
  auto at = [&](int64_t y, int64_t x, int64_t c) { return float(in[(y * in_width + x) * channels + c]); };
  for (int64_t y = 0; y < height; ++y) {
    const Tap& ty = ys[size_t(y)];
    for (int64_t x = 0; x < width; ++x) {
      const Tap& tx = xs[size_t(x)];
      for (int64_t c = 0; c < channels; ++c) {
        float top_left = at(ty.lower, tx.lower, c), top_right = at(ty.lower, tx.upper, c);
        float bottom_left = at(ty.upper, tx.lower, c), bottom_right = at(ty.upper, tx.upper, c);
        float top = top_left + (top_right - top_left) * tx.lerp;
        float bottom = bottom_left + (bottom_right - bottom_left) * tx.lerp;
        *result++ = top + (bottom - top) * ty.lerp;
      }
    }
  }
  return out;
}

ImageDirectoryDataset image_dataset_from_directory(const std::string& directory,
                                                   const ImageDirectoryOptions& options) {
  check_options(options);
  const int channels = channels_of(options.color_mode);
  if (!fs::is_directory(directory)) {
    throw Error(ErrorCode::not_found, "image directory " + directory +
                                          " does not exist; it should hold one subdirectory of "
                                          "images per class");
  }
  std::vector<std::string> found = subdirectories(directory);
  std::vector<std::string> class_names = options.class_names.empty() ? found : options.class_names;
  for (const std::string& name : class_names) {
    if (std::find(found.begin(), found.end(), name) == found.end()) {
      throw Error(ErrorCode::invalid_argument, "class_names names \"" + name +
                                                   "\", which is not a subdirectory of " + directory);
    }
  }
  if (options.label_mode == "binary" && class_names.size() != 2) {
    throw Error(ErrorCode::invalid_argument,
                "label_mode \"binary\" needs exactly 2 classes, found " +
                    std::to_string(class_names.size()) + " in " + directory +
                    "; use \"int\" or \"categorical\"");
  }

  std::vector<std::string> paths;
  std::vector<int32_t> labels;
  for (size_t label = 0; label < class_names.size(); ++label) {
    for (std::string& path : list_class_files(fs::path(directory) / class_names[label])) {
      paths.push_back(std::move(path));
      labels.push_back(int32_t(label));
    }
  }
  if (paths.empty()) {
    throw Error(ErrorCode::not_found, "no images found in " + directory +
                                          " (PNG or JPEG files in one subdirectory per class)");
  }
  std::printf("Found %zu files belonging to %zu classes.\n", paths.size(), class_names.size());
  if (options.shuffle) {
    // One order of the files for the run (both subsets draw the same one from the same seed).
    Random random(options.seed ? *options.seed : std::random_device{}());
    for (size_t i = paths.size() - 1; i > 0; --i) {
      size_t j = size_t(random.below(i + 1));
      std::swap(paths[i], paths[j]);
      std::swap(labels[i], labels[j]);
    }
  }
  keep_subset(options, paths, labels);
  check_argument(!paths.empty(), "the " + options.subset + " subset of " + directory +
                                     " is empty; use a validation_split that leaves files in it");

  const int64_t num_classes = int64_t(class_names.size());
  const int64_t height = options.image_size.first, width = options.image_size.second;
  auto load = [paths, labels, options, channels, num_classes, height, width](const Element& index) {
    size_t i = size_t(index[0].data<int32_t>()[0]);
    Tensor image = resize_bilinear(read_image(paths[i], channels), height, width);
    if (options.label_mode == "none") return Element{image};
    return Element{image, label_tensor(options.label_mode, labels[i], num_classes)};
  };
  Dataset dataset = Dataset::range(int64_t(paths.size()));
  if (options.shuffle) {
    dataset = dataset.shuffle(options.batch_size > 0 ? options.batch_size * 8 : 1024, options.seed);
  }
  dataset = dataset.map(load, AUTOTUNE, element_spec_of(options, channels, num_classes));
  if (options.batch_size > 0) dataset = dataset.batch(options.batch_size);
  return {dataset.prefetch(AUTOTUNE), class_names, paths};
}

}  // namespace tenfold::data
