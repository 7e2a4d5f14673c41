#include "datasets/mnist.h"

#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "datasets/idx.h"

namespace tenfold::datasets {

namespace {

std::string find_file(const std::string& directory, const std::string& stem) {
  for (const std::string& name : {stem + ".gz", stem}) {
    std::filesystem::path path = std::filesystem::path(directory) / name;
    if (std::filesystem::is_regular_file(path)) return path.string();
  }
  throw Error(ErrorCode::not_found, "no " + stem + "(.gz) in " + directory +
                                        "; put the four IDX files of the data set there");
}

Split load_split(const std::string& directory, const std::string& prefix) {
  std::string images_path = find_file(directory, prefix + "-images-idx3-ubyte");
  std::string labels_path = find_file(directory, prefix + "-labels-idx1-ubyte");
  Split split{read_idx(images_path), read_idx(labels_path)};
  if (split.images.shape().rank() != 3 || split.labels.shape().rank() != 1) {
    throw Error(ErrorCode::data_loss, images_path + " must hold (count, rows, columns) images and " +
                                          labels_path + " (count,) labels; got " +
                                          split.images.shape().to_string() + " and " +
                                          split.labels.shape().to_string());
  }
  if (split.images.shape()[0] != split.labels.shape()[0]) {
    throw Error(ErrorCode::data_loss, images_path + " holds " +
                                          std::to_string(split.images.shape()[0]) +
                                          " images but " + labels_path + " holds " +
                                          std::to_string(split.labels.shape()[0]) + " labels");
  }
  for (uint8_t label : split.labels.values<uint8_t>()) {
    if (label >= 10) {
      throw Error(ErrorCode::data_loss, labels_path + " holds label " + std::to_string(label) +
                                            ", outside the 10 classes");
    }
  }
  return split;
}

}  // namespace

ImageClassificationData load_idx_directory(const std::string& directory) {
  if (!std::filesystem::is_directory(directory)) {
    throw Error(ErrorCode::not_found,
                "data directory " + directory + " does not exist; create it and put the data "
                "set's four IDX files there: train-images-idx3-ubyte, train-labels-idx1-ubyte, "
                "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte (each raw or .gz)");
  }
  return {load_split(directory, "train"), load_split(directory, "t10k")};
}

data::Dataset to_dataset(const Split& split) {
  return data::Dataset::from_tensor_slices(
      {images_to_float(split.images, 1.0f / 255.0f), labels_to_int32(split.labels)});
}

namespace {
ImageClassificationDatasets to_datasets(const ImageClassificationData& data) {
  return {to_dataset(data.train), to_dataset(data.test)};
}
}  // namespace

namespace fashion_mnist {
ImageClassificationData load_data(const std::string& directory) {
  return load_idx_directory(directory);
}
ImageClassificationDatasets load_datasets(const std::string& directory) {
  return to_datasets(load_data(directory));
}
}  // namespace fashion_mnist

namespace mnist {
std::string default_directory() {
  if (const char* root = std::getenv("TENFOLD_DATASETS")) {
    return (std::filesystem::path(root) / "mnist").string();
  }
  const char* home = std::getenv("HOME");
  return (std::filesystem::path(home ? home : ".") / ".tenfold" / "datasets" / "mnist").string();
}
ImageClassificationData load_data(const std::string& directory) {
  return load_idx_directory(directory);
}
ImageClassificationDatasets load_datasets(const std::string& directory) {
  return to_datasets(load_data(directory));
}
}  // namespace mnist

}  // namespace tenfold::datasets
