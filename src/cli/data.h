#pragma once
// The data a command reads, chosen by what --data names, read as a Keras user reads it, and
// checked against the model before any work:
//   fashion-mnist | mnist | a directory of IDX files    the recipe's data (images / 255)
//   a directory with one subdirectory per class        image_dataset_from_directory (PNG, JPEG)
//   FILE.csv (--label COLUMN, --categorical COLUMNS)   pandas' read_csv + get_dummies
//   FILE.npz (x and y, or x_train, y_train[, x_test, y_test]) or FILE.npy with --labels Y.npy
// Arrays are taken as Keras' fit takes them: cast to float32, not rescaled.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/arguments.h"
#include "data/dataset.h"
#include "models/model.h"

namespace tenfold::cli {

struct DataOptions {
  std::string path = "fashion-mnist";
  std::string labels_path;
  std::string label_column;
  std::vector<std::string> categorical;

  /// Takes --data, --labels, --label and --categorical from `arguments`.
  static DataOptions take(Arguments& arguments);
};

/// What a data set holds. Samples in memory (x, y; y empty when the data has no labels), or an
/// image directory, read as it is iterated.
struct UserData {
  std::string name;  // what --data named
  Tensor x, y;
  /// The source's own held-out split: the IDX test files, an .npz's x_test and y_test.
  std::optional<std::pair<Tensor, Tensor>> test;
  std::string image_directory;
  /// Classes by label: an image directory's subdirectories, a CSV's text labels (sorted).
  std::vector<std::string> class_names;

  bool has_labels() const { return !image_directory.empty() || !y.empty(); }
};

/// Reads the data `options` name for `model` (its input shape sizes images from a directory).
/// `split` picks what a source with its own train and test split gives: "train" or "test".
/// Samples whose shape is not the model's input are an error naming both.
UserData read_data(const DataOptions& options, const models::Model& model, const std::string& split);

/// Batches of (features, labels) for fit or evaluate: shuffled with `seed` each epoch when
/// `shuffle`. Labels are checked against the model's loss and output first (their range,
/// their shape), naming the bad sample. An image directory's labels take the form the loss
/// needs (int, categorical one-hot, binary). `validation_split` > 0 keeps the last fraction
/// (before shuffling, as Keras' fit) out of the batches and returns it as `held_out`.
struct Batches {
  data::Dataset batches;
  std::optional<data::Dataset> held_out;
  /// Samples per class in `batches` (classification labels; empty for regression targets).
  std::vector<int64_t> class_counts;
  /// The classes' names where the data names them (image subdirectories, CSV text labels).
  std::vector<std::string> class_names;
};
Batches labelled_batches(const UserData& data, const models::Model& model, int64_t batch_size,
                         bool shuffle, uint64_t seed, double validation_split = 0);

/// Keras' class_weight from --class-weight: "balanced" (n_samples / (n_classes x count), as
/// scikit-learn's) or a JSON file mapping classes (indices, or class names) to weights.
std::map<int, double> class_weights(const std::string& option, const Batches& batches);

/// Help text of the data options.
extern const char* const data_options_help;

}  // namespace tenfold::cli
