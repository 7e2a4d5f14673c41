// tenfold predict MODEL: a saved model's predictions for the test split (Keras' model.predict).
#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/data_option.h"
#include "core/error.h"
#include "io/model_file.h"

namespace tenfold::cli {

namespace {

const char* const help = R"(usage: tenfold predict MODEL [options]

Loads MODEL (a Keras .h5 or .keras file) and predicts the class of every image of the test
split (model.predict), printing the first few and the share that matches the labels.

options:
  --count N                 predictions to print (default 10)
  --output FILE.csv         write every prediction: sample, label, predicted class, then the
                            probability of each class
  --batch-size N            batch size (default 512)
)";

}  // namespace

int predict(const std::vector<std::string>& args) {
  Arguments arguments("predict", args);
  if (arguments.wants_help()) {
    std::printf("%s%s", help, data_option_help);
    return 0;
  }
  std::string data_name = arguments.take("--data", "fashion-mnist");
  int64_t count = arguments.take_integer("--count", 10, 0);
  std::string output_path = arguments.take("--output", "");
  int64_t batch_size = arguments.take_integer("--batch-size", 512, 1);
  std::string model_path = arguments.take_required_positional("MODEL (a .h5 or .keras file)");
  arguments.finish();

  auto model = io::load_model(model_path);
  datasets::ImageClassificationDatasets data = load_data_option(data_name);
  data::Element test = *data.test.batch(data.test.cardinality()).iterate()->next();
  const Tensor& images = test[0];
  const Tensor& labels = test[1];
  Tensor probabilities = model->predict(images, batch_size);

  check_argument(probabilities.shape().rank() == 2,
                 model_path + " gives outputs of shape " + probabilities.shape().to_string() +
                     ", not class probabilities (samples, classes): predict needs a classifier");
  const int64_t samples = probabilities.shape()[0], classes = probabilities.shape()[1];
  std::ofstream csv;
  if (!output_path.empty()) {
    csv.open(output_path);
    check_argument(bool(csv), "cannot write " + output_path + ": check the directory exists and is writable");
    csv << "sample,label,predicted";
    for (int64_t k = 0; k < classes; ++k) csv << ",p" << k;
    csv << "\n";
  }
  int64_t correct = 0;
  for (int64_t i = 0; i < samples; ++i) {
    const float* row = probabilities.data<float>() + i * classes;
    int64_t predicted = std::max_element(row, row + classes) - row;
    int label = labels.data<int32_t>()[i];
    correct += predicted == label;
    if (i < count) std::printf("sample %lld: predicted %lld (p=%.4f), label %d\n", (long long)i,
                               (long long)predicted, double(row[predicted]), label);
    if (!csv.is_open()) continue;
    csv << i << "," << label << "," << predicted;
    for (int64_t k = 0; k < classes; ++k) csv << "," << row[k];
    csv << "\n";
  }
  std::printf("Predicted %lld samples: %.4f match their labels\n", (long long)samples,
              double(correct) / double(samples));
  if (csv.is_open()) {
    csv.close();
    if (!csv) throw Error(ErrorCode::unavailable, "could not write predictions to " + output_path);
    std::printf("Wrote every prediction to %s\n", output_path.c_str());
  }
  return 0;
}

}  // namespace tenfold::cli
