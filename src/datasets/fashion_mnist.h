#pragma once
// keras.datasets.fashion_mnist / mnist load_data(): ((x_train, y_train), (x_test, y_test)) as
// uint8 tensors, images (N, 28, 28), labels (N,). Read from IDX files (gz or raw) in a directory.
#include <string>

#include "core/tensor.h"

namespace tenfold::datasets {

struct Split {
  Tensor images;  // uint8 [N, 28, 28]
  Tensor labels;  // uint8 [N]
};

struct ImageClassificationData {
  Split train, test;
};

/// Reads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-... (each .gz or raw) from
/// `directory`; checks images and labels agree in count and labels lie in [0, 10).
ImageClassificationData load_idx_directory(const std::string& directory);

namespace fashion_mnist {
/// Default: the dataset-fashion-mnist Debian package's directory.
ImageClassificationData load_data(const std::string& directory = TENFOLD_FASHION_MNIST_DIR);
}  // namespace fashion_mnist

}  // namespace tenfold::datasets
