#include "datasets/fashion_mnist.h"

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
  return {load_split(directory, "train"), load_split(directory, "t10k")};
}

namespace fashion_mnist {
ImageClassificationData load_data(const std::string& directory) {
  return load_idx_directory(directory);
}
}  // namespace fashion_mnist

}  // namespace tenfold::datasets
