// tenfold predict MODEL: a saved model's predictions for any data (Keras' model.predict).
#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/data.h"
#include "core/error.h"
#include "data/image_directory.h"
#include "datasets/numpy.h"
#include "io/model_file.h"

namespace tenfold::cli {

namespace {

const char* const predict_help = R"(usage: tenfold predict MODEL [options]

Loads MODEL (a Keras .h5, .keras or .json file) and predicts every sample of --data (a data
set's test split, or all of it) with model.predict, printing the first few; for a classifier
(one output per class) the predicted class and, where the data has labels, the share that
matches them.

options:
  --count N                 predictions to print (default 10)
  --output FILE.csv|FILE.npy
                            write every prediction: .npy the model's outputs as an array
                            (np.load reads it); .csv a row per sample: sample, the image file
                            (image directories), label (when known), predicted class and its
                            name (classifiers), then each output (p0, p1, ...)
  --batch-size N            batch size (default 512)
)";

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

/// The model's outputs for every sample, and the labels where the data has them (int32,
/// else empty). An image directory is read in file order.
std::pair<Tensor, Tensor> predict_all(models::Model& model, const UserData& data, int64_t batch_size,
                                      std::vector<std::string>& files, std::vector<std::string>& class_names) {
  if (data.image_directory.empty()) {
    return {model.predict(data.x, batch_size), data.y.empty() || data.y.dtype() != DType::int32 ? Tensor() : data.y};
  }
  const Shape& input = model.input_shape();
  check_argument(input.rank() == 3 && (input[2] == 1 || input[2] == 3 || input[2] == 4),
                 "model '" + model.name() + "' takes samples of shape " + input.to_string() + ", not images: " +
                     data.image_directory + " holds images");
  data::ImageDirectoryOptions options;
  options.color_mode = input[2] == 1 ? "grayscale" : input[2] == 3 ? "rgb" : "rgba";
  options.image_size = {input[0], input[1]};
  options.batch_size = batch_size;
  options.shuffle = false;
  data::ImageDirectoryDataset images = data::image_dataset_from_directory(data.image_directory, options);
  data::check_image_files(images.file_paths);
  files = images.file_paths;
  class_names = images.class_names;
  std::vector<Tensor> outputs, labels;
  auto iterator = images.dataset.iterate();
  while (auto batch = iterator->next()) {
    outputs.push_back(model.predict((*batch)[0], batch_size));
    labels.push_back((*batch)[1]);
  }
  auto concatenate = [](const std::vector<Tensor>& parts) {
    int64_t rows = 0;
    for (const Tensor& part : parts) rows += part.shape()[0];
    std::vector<int64_t> dims = parts[0].shape().dims();
    dims[0] = rows;
    Tensor all(Shape(dims), parts[0].dtype());
    size_t offset = 0;
    for (const Tensor& part : parts) {
      std::copy_n(static_cast<const char*>(part.raw_data()), part.num_bytes(), static_cast<char*>(all.raw_data()) + offset);
      offset += part.num_bytes();
    }
    return all;
  };
  return {concatenate(outputs), concatenate(labels)};
}

}  // namespace

int predict(const std::vector<std::string>& args) {
  Arguments arguments("predict", args);
  if (arguments.wants_help()) {
    std::printf("%s%s", predict_help, data_options_help);
    return 0;
  }
  DataOptions data_options = DataOptions::take(arguments);
  int64_t count = arguments.take_integer("--count", 10, 0);
  std::string output_path = arguments.take("--output", "");
  int64_t batch_size = arguments.take_integer("--batch-size", 512, 1);
  std::string model_path = arguments.take_required_positional("MODEL (a .h5, .keras or .json file)");
  arguments.finish();
  check_argument(output_path.empty() || output_path.ends_with(".csv") || output_path.ends_with(".npy"),
                 "--output writes a .csv or a .npy file, not " + output_path);

  auto model = model_path.ends_with(".json") ? io::load_model_json(model_path) : io::load_model(model_path);
  check_argument(model->num_inputs() == 1 && model->num_outputs() == 1,
                 "tenfold predict takes models with one input and one output; use the C++ API (Model::predict) "
                 "for model '" + model->name() + "'");
  UserData data = read_data(data_options, *model, "test");
  std::vector<std::string> files, class_names = data.class_names;
  auto [outputs, labels] = predict_all(*model, data, batch_size, files, class_names);

  const int64_t samples = outputs.shape()[0];
  const int64_t width = samples ? outputs.num_elements() / samples : 0;
  const bool classifier = outputs.shape().rank() == 2 && width > 1;
  // Not `outputs` itself in the lambda: clang 14 cannot capture a structured binding.
  const float* predictions = outputs.data<float>();
  auto predicted_class = [&](int64_t i) {
    const float* row = predictions + i * width;
    return int64_t(std::max_element(row, row + width) - row);
  };
  if (output_path.ends_with(".npy")) datasets::write_npy(output_path, outputs);
  std::ofstream csv;
  if (output_path.ends_with(".csv")) {
    csv.open(output_path);
    check_argument(bool(csv), "cannot write " + output_path + ": check the directory exists and is writable");
    csv << "sample" << (files.empty() ? "" : ",file") << (labels.empty() ? "" : ",label")
        << (classifier ? ",predicted" : "") << (classifier && !class_names.empty() ? ",predicted_class" : "");
    for (int64_t k = 0; k < width; ++k) csv << ",p" << k;
    csv << "\n";
  }
  int64_t correct = 0;
  for (int64_t i = 0; i < samples; ++i) {
    const float* row = outputs.data<float>() + i * width;
    const int64_t predicted = classifier ? predicted_class(i) : 0;
    const int label = labels.empty() ? -1 : labels.data<int32_t>()[i];
    correct += classifier && predicted == label;
    if (i < count) {
      std::string name = classifier && size_t(predicted) < class_names.size() ? " " + class_names[size_t(predicted)] : "";
      if (classifier) {
        std::printf("sample %lld: predicted %lld%s (p=%.4f)", (long long)i, (long long)predicted, name.c_str(),
                    double(row[predicted]));
      } else {
        std::printf("sample %lld: %.6g%s", (long long)i, double(row[0]), width > 1 ? " ..." : "");
      }
      if (!labels.empty()) std::printf(", label %d", label);
      std::printf("\n");
    }
    if (!csv.is_open()) continue;
    csv << i;
    if (!files.empty()) csv << "," << csv_field(files[size_t(i)]);
    if (!labels.empty()) csv << "," << label;
    if (classifier) csv << "," << predicted;
    if (classifier && !class_names.empty()) csv << "," << (size_t(predicted) < class_names.size() ? csv_field(class_names[size_t(predicted)]) : "");
    for (int64_t k = 0; k < width; ++k) csv << "," << row[k];
    csv << "\n";
  }
  std::printf("Predicted %lld samples", (long long)samples);
  if (classifier && !labels.empty()) std::printf(": %.4f match their labels", double(correct) / double(samples));
  std::printf("\n");
  if (csv.is_open()) {
    csv.close();
    if (!csv) throw Error(ErrorCode::unavailable, "could not write predictions to " + output_path);
  }
  if (!output_path.empty()) std::printf("Wrote every prediction to %s\n", output_path.c_str());
  return 0;
}

}  // namespace tenfold::cli
