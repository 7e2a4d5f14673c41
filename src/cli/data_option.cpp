#include "cli/data_option.h"

namespace tenfold::cli {

const char* const data_option_help = R"(  --data fashion-mnist|mnist|DIR
                            IDX files (.gz or raw): fashion-mnist (default,
                            /usr/share/datasets/fashion-mnist), mnist ($TENFOLD_DATASETS/mnist,
                            default ~/.tenfold/datasets/mnist), or a directory holding
                            train-/t10k-images-idx3-ubyte and train-/t10k-labels-idx1-ubyte
)";

datasets::ImageClassificationDatasets load_data_option(const std::string& name) {
  if (name == "fashion-mnist") return datasets::fashion_mnist::load_datasets();
  if (name == "mnist") return datasets::mnist::load_datasets();
  return datasets::fashion_mnist::load_datasets(name);
}

}  // namespace tenfold::cli
