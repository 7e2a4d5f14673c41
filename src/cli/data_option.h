#pragma once
// --data fashion-mnist|mnist|DIR, shared by the commands that read a data set.
#include <string>

#include "datasets/mnist.h"

namespace tenfold::cli {

/// The recipe's train and test Datasets (images / 255, int32 labels, unbatched) of `name`.
datasets::ImageClassificationDatasets load_data_option(const std::string& name);

/// Help text of --data.
extern const char* const data_option_help;

}  // namespace tenfold::cli
