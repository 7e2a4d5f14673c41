#pragma once
// keras.datasets.mnist / fashion_mnist: load_data() gives ((x_train, y_train), (x_test, y_test))
// as uint8 tensors, images (N, 28, 28), labels (N,), read from the four IDX files (gz or raw)
// of a directory; load_datasets() gives them as the recipe prepares them, as Datasets.
#include <string>

#include "core/tensor.h"
#include "data/dataset.h"

namespace tenfold::datasets {

struct Split {
  Tensor images;  // uint8 [N, 28, 28]
  Tensor labels;  // uint8 [N]
};

struct ImageClassificationData {
  Split train, test;
};

struct ImageClassificationDatasets {
  data::Dataset train, test;
};

/// Reads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-... (each .gz or raw) from
/// `directory`; checks images and labels agree in count and labels lie in [0, 10).
ImageClassificationData load_idx_directory(const std::string& directory);

/// from_tensor_slices((images / 255 as float32 [N, 28, 28, 1], labels as int32)): unbatched,
/// unshuffled, as the recipe starts its pipeline.
data::Dataset to_dataset(const Split& split);

namespace fashion_mnist {
/// Default: the dataset-fashion-mnist Debian package's directory.
ImageClassificationData load_data(const std::string& directory = TENFOLD_FASHION_MNIST_DIR);
ImageClassificationDatasets load_datasets(const std::string& directory = TENFOLD_FASHION_MNIST_DIR);
}  // namespace fashion_mnist

namespace mnist {
/// MNIST has no Debian package: its IDX files go in $TENFOLD_DATASETS/mnist, by default
/// ~/.tenfold/datasets/mnist. The error when they are absent says so.
std::string default_directory();
ImageClassificationData load_data(const std::string& directory = default_directory());
ImageClassificationDatasets load_datasets(const std::string& directory = default_directory());
}  // namespace mnist

}  // namespace tenfold::datasets
