#include "cli/data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/image_directory.h"
#include "datasets/csv.h"
#include "datasets/idx.h"
#include "datasets/mnist.h"
#include "datasets/numpy.h"

namespace tenfold::cli {

namespace fs = std::filesystem;

const char* const data_options_help = R"(  --data NAME|DIR|FILE      the data (default fashion-mnist):
                            fashion-mnist (/usr/share/datasets/fashion-mnist), mnist
                            ($TENFOLD_DATASETS/mnist, default ~/.tenfold/datasets/mnist) or a
                            directory of IDX files (train-/t10k-images-idx3-ubyte and
                            -labels-idx1-ubyte, .gz or raw): images / 255, with a test split;
                            a directory with one subdirectory of PNG or JPEG images per class
                            (Keras' image_dataset_from_directory: resized bilinearly to the
                            model's input, classes in sorted order, pixels 0..255);
                            FILE.csv with a header row (pandas' read_csv); FILE.npz holding x
                            and y, or x_train, y_train (and x_test, y_test as the test split);
                            FILE.npy of samples with --labels. Arrays are cast to float32.
  --labels Y.npy            the labels of --data X.npy
  --label COLUMN            the label column of a CSV file: integers or text are classes
                            (text in sorted order), other numbers regression targets
  --categorical COLUMNS     CSV text columns to one-hot encode, comma-separated (as
                            pd.get_dummies: one column per value, sorted); other text columns
                            are an error
)";

namespace {

bool has_extension(const std::string& path, const std::string& extension) {
  return path.size() > extension.size() &&
         path.compare(path.size() - extension.size(), extension.size(), extension) == 0;
}

bool holds_idx_files(const fs::path& directory) {
  return fs::exists(directory / "train-images-idx3-ubyte") || fs::exists(directory / "train-images-idx3-ubyte.gz");
}

Tensor as_float32(const Tensor& tensor) {
  if (tensor.dtype() == DType::float32) return tensor;
  Tensor result(tensor.shape());
  float* out = result.data<float>();
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    out[i] = tensor.dtype() == DType::uint8 ? float(tensor.data<uint8_t>()[i]) : float(tensor.data<int32_t>()[i]);
  }
  return result;
}

/// Labels as losses take them: integer classes as int32, anything else float32.
Tensor as_labels(const Tensor& tensor) {
  if (tensor.dtype() != DType::uint8) return tensor;
  Tensor result(tensor.shape(), DType::int32);
  for (int64_t i = 0; i < tensor.num_elements(); ++i) result.data<int32_t>()[i] = tensor.data<uint8_t>()[i];
  return result;
}

/// The shape of one sample of a batch shaped `shape`.
Shape sample_shape(const Shape& shape) {
  const std::vector<int64_t>& dims = shape.dims();
  return Shape(std::vector<int64_t>(dims.begin() + (dims.empty() ? 0 : 1), dims.end()));
}

void from_idx(UserData& data, const datasets::ImageClassificationData& idx, const std::string& split) {
  auto take = [](const datasets::Split& part) {
    return std::make_pair(datasets::images_to_float(part.images, 1.0f / 255.0f), datasets::labels_to_int32(part.labels));
  };
  std::tie(data.x, data.y) = take(split == "test" ? idx.test : idx.train);
  if (split == "train") data.test = take(idx.test);
}

void from_npz(UserData& data, const std::string& path, const std::string& split) {
  std::map<std::string, Tensor> arrays = datasets::read_npz(path);
  std::string keys;
  for (const auto& [key, array] : arrays) keys += (keys.empty() ? "" : ", ") + key;
  auto get = [&](const std::string& key) { return arrays.count(key) ? arrays.at(key) : Tensor(); };
  if (arrays.count("x")) {
    data.x = get("x");
    data.y = get("y");
  } else if (arrays.count("x_train")) {
    const bool test = split == "test" && arrays.count("x_test");
    data.x = get(test ? "x_test" : "x_train");
    data.y = get(test ? "y_test" : "y_train");
    if (split == "train" && arrays.count("x_test") && arrays.count("y_test")) {
      data.test = {as_float32(get("x_test")), as_labels(get("y_test"))};
    }
  } else {
    throw Error(ErrorCode::invalid_argument,
                path + " holds arrays " + keys + "; Tenfold reads samples from 'x' (labels 'y') or 'x_train' "
                       "(labels 'y_train', and 'x_test', 'y_test' as the test split): save them with "
                       "np.savez(path, x=..., y=...)");
  }
}

}  // namespace

DataOptions DataOptions::take(Arguments& arguments) {
  DataOptions options;
  options.path = arguments.take("--data", options.path);
  options.labels_path = arguments.take("--labels", "");
  options.label_column = arguments.take("--label", "");
  options.categorical = arguments.take_list("--categorical");
  const bool csv = has_extension(options.path, ".csv");
  check_argument(options.labels_path.empty() || has_extension(options.path, ".npy"),
                 "--labels goes with --data X.npy; " + options.path + " holds its own labels");
  check_argument((options.label_column.empty() && options.categorical.empty()) || csv,
                 "--label and --categorical name columns of a CSV file; --data " + options.path + " is not one");
  return options;
}

UserData read_data(const DataOptions& options, const models::Model& model, const std::string& split) {
  UserData data;
  data.name = options.path;
  const std::string& path = options.path;
  if (path == "fashion-mnist") {
    from_idx(data, datasets::fashion_mnist::load_data(), split);
  } else if (path == "mnist") {
    from_idx(data, datasets::mnist::load_data(), split);
  } else if (has_extension(path, ".csv")) {
    datasets::CsvTable table = datasets::read_csv(path, {options.label_column, options.categorical});
    data.x = table.features;
    data.y = table.labels;
    data.class_names = table.class_names;
  } else if (has_extension(path, ".npz")) {
    from_npz(data, path, split);
  } else if (has_extension(path, ".npy")) {
    data.x = datasets::read_npy(path);
    if (!options.labels_path.empty()) data.y = datasets::read_npy(options.labels_path);
  } else if (fs::is_directory(path) && !holds_idx_files(path)) {
    data.image_directory = path;
    return data;
  } else {
    from_idx(data, datasets::load_idx_directory(path), split);
  }
  data.x = as_float32(data.x);
  if (!data.y.empty()) data.y = as_labels(data.y);

  auto check_fits = [&](const Tensor& x, const Tensor& y) {
    const Shape& input = model.input_shape();
    const Shape& samples = x.shape();
    bool fits = samples.rank() == input.rank() + 1;
    for (int d = 0; fits && d < input.rank(); ++d) fits = samples[d + 1] == input[d];
    if (!fits) {
      std::string hint = samples.rank() == input.rank() && input[input.rank() - 1] == 1
                             ? " (add the channel axis: np.expand_dims(x, -1))"
                             : "";
      throw Error(ErrorCode::invalid_argument,
                  "model '" + model.name() + "' takes samples of shape " + input.to_string() + " but " + path +
                      " holds samples of shape " + sample_shape(samples).to_string() + hint);
    }
    if (!y.empty() && y.shape()[0] != samples[0]) {
      throw Error(ErrorCode::invalid_argument, path + " holds " + std::to_string(samples[0]) + " samples but " +
                                                   std::to_string(y.shape()[0]) + " labels");
    }
  };
  check_fits(data.x, data.y);
  if (data.test) check_fits(data.test->first, data.test->second);
  return data;
}

namespace {

/// The form an image directory's labels take for `loss` (Keras' label_mode).
std::string label_mode_for(const std::string& loss) {
  if (loss == "categorical_crossentropy" || loss == "categorical_focal_crossentropy") return "categorical";
  if (loss == "binary_crossentropy" || loss == "binary_focal_crossentropy") return "binary";
  return "int";
}

/// Checks the classes of an image directory against the model's output.
void check_classes(const std::vector<std::string>& class_names, const std::string& label_mode,
                   const models::Model& model, const std::string& directory) {
  const int64_t units = model.output_shape(1).num_elements();
  const int64_t classes = int64_t(class_names.size());
  const bool fits = label_mode == "binary" ? classes == 2 && units == 1
                    : label_mode == "categorical" ? classes == units
                                                  : classes <= units;
  if (fits) return;
  throw Error(ErrorCode::invalid_argument,
              directory + " holds " + std::to_string(classes) + " classes (subdirectories) but model '" +
                  model.name() + "' gives " + std::to_string(units) + " output" + (units == 1 ? "" : "s") +
                  (label_mode == "binary" ? " (binary crossentropy needs 2 classes and 1 output)"
                                          : ": the last layer needs one unit per class"));
}

/// Float labels (one-hot, regression targets) must have the output's size per sample.
void check_label_shape(const Tensor& y, const models::Model& model, const std::string& name) {
  if (y.dtype() != DType::float32) return;
  const int64_t per_sample = y.shape()[0] ? y.num_elements() / y.shape()[0] : 0;
  const Shape output = model.output_shape(1);
  if (per_sample == output.num_elements()) return;
  throw Error(ErrorCode::invalid_argument,
              "the labels of " + name + " have " + std::to_string(per_sample) + " value" + (per_sample == 1 ? "" : "s") +
                  " per sample but model '" + model.name() + "' gives " + std::to_string(output.num_elements()) +
                  " per sample (" + model.loss()->name() + "): give labels of the output's shape or another --loss");
}

/// Samples per class of classification labels: integer labels, one-hot rows, or one
/// sigmoid output's 0/1 targets; empty for regression targets.
std::vector<int64_t> class_counts(const Tensor& labels, const models::Model& model) {
  const std::string loss = model.loss()->name();
  if (loss.find("crossentropy") == std::string::npos && loss.find("hinge") == std::string::npos) return {};
  std::vector<int64_t> counts;
  for (int64_t r = 0; r < labels.shape()[0]; ++r) {
    const int64_t label = losses::class_of_label(labels, r);
    if (label < 0) continue;
    if (size_t(label) >= counts.size()) counts.resize(size_t(label) + 1, 0);
    ++counts[size_t(label)];
  }
  return counts;
}

}  // namespace

std::map<int, double> class_weights(const std::string& option, const Batches& batches) {
  const std::vector<std::string>& class_names = batches.class_names;
  check_argument(!batches.class_counts.empty(),
                 "--class-weight weighs classes, but these labels are regression targets (the loss is not a classification loss)");
  std::map<int, double> weights;
  if (option == "balanced") {
    int64_t samples = 0, classes = 0;
    for (int64_t count : batches.class_counts) {
      samples += count;
      classes += count > 0;
    }
    for (size_t c = 0; c < batches.class_counts.size(); ++c) {
      if (batches.class_counts[c] > 0) weights[int(c)] = double(samples) / double(classes * batches.class_counts[c]);
    }
    return weights;
  }
  check_argument(option.ends_with(".json"), "--class-weight takes 'balanced' or a JSON file, got '" + option + "'");
  std::ifstream file(option);
  check_argument(bool(file), "--class-weight: " + option + " does not exist");
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& error) {
    throw Error(ErrorCode::invalid_argument, "--class-weight: " + option + " is not valid JSON: " + error.what());
  }
  check_argument(config.is_object(), "--class-weight: " + option + " must hold an object mapping classes to weights, "
                                     "e.g. {\"0\": 1.0, \"1\": 5.0}");
  for (const auto& [key, value] : config.items()) {
    auto name = std::find(class_names.begin(), class_names.end(), key);
    int index = -1;
    if (name != class_names.end()) {
      index = int(name - class_names.begin());
    } else if (!key.empty() && key.find_first_not_of("0123456789") == std::string::npos && key.size() < 9) {
      index = std::stoi(key);
    }
    check_argument(index >= 0, "--class-weight: " + option + " names class '" + key +
                                   "', which is neither a class index nor one of the data's class names");
    check_argument(value.is_number() && value.get<double>() >= 0,
                   "--class-weight: the weight of class '" + key + "' must be a number >= 0, got " + value.dump());
    weights[index] = value.get<double>();
  }
  return weights;
}

Batches labelled_batches(const UserData& data, const models::Model& model, int64_t batch_size, bool shuffle,
                         uint64_t seed, double validation_split) {
  check_argument(model.loss() != nullptr, "model '" + model.name() + "' is not compiled");
  if (!data.image_directory.empty()) {
    const Shape& input = model.input_shape();
    check_argument(input.rank() == 3, "model '" + model.name() + "' takes samples of shape " + input.to_string() +
                                          ", not images (height, width, channels): " + data.image_directory +
                                          " holds images");
    data::ImageDirectoryOptions options;
    options.label_mode = label_mode_for(model.loss()->name());
    const std::map<int64_t, std::string> color_modes = {{1, "grayscale"}, {3, "rgb"}, {4, "rgba"}};
    check_argument(color_modes.count(input[2]) == 1, "model '" + model.name() + "' takes images of " +
                                                         std::to_string(input[2]) + " channels; images have 1, 3 or 4");
    options.color_mode = color_modes.at(input[2]);
    options.image_size = {input[0], input[1]};
    options.batch_size = batch_size;
    options.shuffle = shuffle;
    options.seed = seed;
    std::optional<data::ImageDirectoryDataset> held_out;
    if (validation_split > 0) {
      options.validation_split = validation_split;
      options.subset = "validation";
      options.shuffle = true;  // Keras splits a shuffled file list; both subsets draw it from the seed
      held_out = data::image_dataset_from_directory(data.image_directory, options);
      options.subset = "training";
    }
    data::ImageDirectoryDataset images = data::image_dataset_from_directory(data.image_directory, options);
    check_classes(images.class_names, options.label_mode, model, data.image_directory);
    // Before any training: every file an image that ends where it should, every class with images.
    std::vector<std::string> files = images.file_paths;
    if (held_out) files.insert(files.end(), held_out->file_paths.begin(), held_out->file_paths.end());
    data::check_image_files(files);
    auto count_classes = [&](const std::vector<std::string>& paths) {
      std::vector<int64_t> counts(images.class_names.size(), 0);
      for (const std::string& file : paths) {
        const std::string class_name = fs::relative(file, data.image_directory).begin()->string();
        auto found = std::find(images.class_names.begin(), images.class_names.end(), class_name);
        if (found != images.class_names.end()) ++counts[size_t(found - images.class_names.begin())];
      }
      return counts;
    };
    const std::vector<int64_t> all = count_classes(files);
    for (size_t c = 0; c < all.size(); ++c) {
      check_argument(all[c] > 0, data.image_directory + "/" + images.class_names[c] +
                                     " holds no PNG or JPEG images: an empty class cannot be learned; add "
                                     "its images or remove the folder");
    }
    return {images.dataset, held_out ? std::optional(held_out->dataset) : std::nullopt,
            count_classes(images.file_paths), images.class_names};
  }
  check_argument(data.has_labels(), data.name + " has no labels: give them with " +
                                        (data.name.ends_with(".csv") ? std::string("--label COLUMN")
                                                                     : std::string("--labels Y.npy")));
  // Integer labels are class indices for sparse losses; other losses take them as numbers
  // (0/1 for binary crossentropy, regression targets), as Keras casts them.
  const bool sparse = model.loss()->name().starts_with("sparse_");
  const Tensor labels = data.y.dtype() == DType::int32 && !sparse ? as_float32(data.y) : data.y;
  model.loss()->validate_targets(labels, model.output_shape(labels.shape()[0]));
  check_label_shape(labels, model, data.name);
  const int64_t samples = data.x.shape()[0];
  // Keras' fit: the last fraction, before shuffling, is held out.
  const int64_t kept = validation_split > 0 ? int64_t(std::floor(double(samples) * (1 - validation_split))) : samples;
  check_argument(kept > 0 && (validation_split == 0 || kept < samples),
                 "--validation-split " + std::to_string(validation_split) + " of " + std::to_string(samples) +
                     " samples leaves no samples to " + (kept > 0 ? "validate on" : "train on"));
  data::Dataset train = data::Dataset::from_tensor_slices({data.x.slice_batch(0, kept), labels.slice_batch(0, kept)});
  if (shuffle) train = train.shuffle(10000, seed);
  Batches batches{train.batch(batch_size).prefetch(data::AUTOTUNE), std::nullopt, class_counts(labels.slice_batch(0, kept), model),
                  data.class_names};
  if (kept < samples) {
    batches.held_out = data::Dataset::from_tensor_slices({data.x.slice_batch(kept, samples), labels.slice_batch(kept, samples)})
                           .batch(batch_size)
                           .prefetch(data::AUTOTUNE);
  }
  return batches;
}

}  // namespace tenfold::cli
