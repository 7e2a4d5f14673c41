// A user's own model (Keras files made by tools/make_model_fixtures.py) and own data (CSV,
// NumPy arrays, a directory of JPEG images) through tenfold train, evaluate and predict, and
// the errors that catch data that does not fit the model before any work.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/random.h"
#include "data/image_directory.h"
#include "datasets/csv.h"
#include "datasets/numpy.h"
#include "io/zip_archive.h"
#include "support/check.h"
#include "support/process.h"
#include "support/tenfold_command.h"

namespace tenfold {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::tenfold;
using testing::fixture_path;

class UserData : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("tenfold_user_data_" + std::to_string(getpid()));
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }
  std::string path(const std::string& name) const { return (directory_ / name).string(); }

  /// A table a small classifier learns: class by the sign of a - b, and shifted by colour.
  std::string write_table(int64_t rows) const {
    std::ofstream csv(path("table.csv"));
    csv << "a,b,colour,kind\n";
    Random random(4);
    const char* colours[] = {"red", "green", "blue"};
    for (int64_t i = 0; i < rows; ++i) {
      double a = random.uniform(-1, 1), b = random.uniform(-1, 1);
      int colour = int(random.below(3));
      int kind = (a - b > 0 ? 1 : 0) + (colour == 0 ? 1 : 0);
      csv << a << "," << b << "," << colours[colour] << ",\"kind " << kind << "\"\n";
    }
    return path("table.csv");
  }

  fs::path directory_;
};

nlohmann::json history_of(const std::string& path) { return nlohmann::json::parse(std::ifstream(path)); }

TEST_F(UserData, CsvTableTrainsAKerasFileCompiledWithAStringOptimizer) {
  // tabular.keras: compiled with optimizer="adam", never trained (the file holds no optimizer
  // variables beyond the iteration count and learning rate).
  const std::string table = write_table(600);
  CommandResult train = tenfold("train --model " + fixture_path("models/tabular.keras") + " --data " + table +
                                " --label kind --categorical colour --validation-split 0.25 --epochs 40 "
                                "--batch-size 32 --learning-rate 0.01 --verbose 2 --devices 2 --history " +
                                path("history.json") + " --save " + path("trained.keras"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_NE(train.output.find("Training with optimizer Adam (learning rate 0.01), loss "
                              "sparse_categorical_crossentropy, metrics [accuracy] from the model file"),
            std::string::npos)
      << train.output;
  EXPECT_NE(train.output.find("15/15 - "), std::string::npos) << "450 of 600 rows train: " << train.output;
  const double accuracy = history_of(path("history.json"))["history"]["val_accuracy"].back();
  EXPECT_GE(accuracy, 0.9) << train.output;

  CommandResult evaluate = tenfold("evaluate " + path("trained.keras") + " --data " + table +
                                   " --label kind --categorical colour");
  ASSERT_EQ(evaluate.exit_code, 0) << evaluate.output;
  EXPECT_GE(std::stod(evaluate.output.substr(evaluate.output.find("test accuracy: ") + 15)), 0.9);

  CommandResult predict = tenfold("predict " + path("trained.keras") + " --data " + table +
                                  " --label kind --categorical colour --count 2 --output " + path("predictions.csv"));
  ASSERT_EQ(predict.exit_code, 0) << predict.output;
  EXPECT_NE(predict.output.find("sample 1: predicted "), std::string::npos) << predict.output;
  std::ifstream csv(path("predictions.csv"));
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(header, "sample,label,predicted,predicted_class,p0,p1,p2");
  EXPECT_NE(row.find(",kind "), std::string::npos) << "class names from the label column: " << row;

  // Frozen layers: every weight fixed, so every epoch's loss is the same.
  CommandResult frozen = tenfold("train --model " + path("trained.keras") + " --data " + table +
                                 " --label kind --categorical colour --freeze dense,dense_1 --epochs 2 "
                                 "--verbose 0 --validation-data " + table + " --history " + path("frozen.json"));
  ASSERT_EQ(frozen.exit_code, 0) << frozen.output;
  auto frozen_history = history_of(path("frozen.json"))["history"];
  EXPECT_NEAR(frozen_history["loss"][0].get<double>(), frozen_history["loss"][1].get<double>(), 1e-6);
  EXPECT_NEAR(frozen_history["val_loss"][0].get<double>(), frozen_history["val_loss"][1].get<double>(), 1e-6);
}

TEST_F(UserData, ClassWeightsBalancedOrByName) {
  // balanced: n_samples / (n_classes x count), as scikit-learn's compute_class_weight.
  const std::string table = write_table(200);
  std::ifstream rows(table);
  std::map<std::string, int> counts;
  std::string line;
  std::getline(rows, line);
  while (std::getline(rows, line)) ++counts[line.substr(line.rfind(',') + 1)];
  ASSERT_EQ(counts.size(), 3u);
  const std::string common = "train --model " + fixture_path("models/tabular.keras") + " --data " + table +
                             " --label kind --categorical colour --epochs 1 --verbose 2 --class-weight ";
  CommandResult balanced = tenfold(common + "balanced");
  ASSERT_EQ(balanced.exit_code, 0) << balanced.output;
  std::string expected = "Class weights:";
  int index = 0;
  for (const auto& [kind, count] : counts) {  // sorted, as the classes
    char text[32];
    std::snprintf(text, sizeof text, " %d: %.4g", index++, 200.0 / (3.0 * count));
    expected += text;
  }
  EXPECT_NE(balanced.output.find(expected + "\n"), std::string::npos) << expected << "\n" << balanced.output;
  std::ofstream(path("weights.json")) << R"({"kind 2": 4, "0": 0.5})";
  CommandResult named = tenfold(common + path("weights.json"));
  ASSERT_EQ(named.exit_code, 0) << named.output;
  EXPECT_NE(named.output.find("Class weights: 0: 0.5 2: 4\n"), std::string::npos) << named.output;
  std::ofstream(path("weights.json"), std::ios::trunc) << R"({"kind 9": 4})";
  CommandResult unknown = tenfold(common + path("weights.json"));
  EXPECT_NE(unknown.output.find("names class 'kind 9', which is neither a class index nor one of the data's class names"),
            std::string::npos)
      << unknown.output;
}

TEST_F(UserData, NumpyArraysWithAnInferredLossAndRegression) {
  // regression.json: model.to_json(), not compiled. Targets 2a - b: mean squared error, no
  // accuracy, and the loss falls far.
  Random random(5);
  Tensor x(Shape({512, 2})), y(Shape({512, 1}));
  for (int64_t i = 0; i < 512; ++i) {
    float a = float(random.uniform(-1, 1)), b = float(random.uniform(-1, 1));
    x.data<float>()[2 * i] = a;
    x.data<float>()[2 * i + 1] = b;
    y.data<float>()[i] = 2 * a - b;
  }
  datasets::write_npy(path("x.npy"), x);
  datasets::write_npy(path("y.npy"), y);
  CommandResult train = tenfold("train --model " + fixture_path("models/regression.json") + " --data " + path("x.npy") +
                                " --labels " + path("y.npy") + " --epochs 30 --batch-size 32 --verbose 0 "
                                "--learning-rate 0.01 --history " + path("history.json") + " --save " +
                                path("regression.h5"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  auto history = history_of(path("history.json"))["history"];
  EXPECT_FALSE(history.contains("accuracy"));
  EXPECT_LT(history["loss"].back().get<double>(), 0.05 * history["loss"][0].get<double>()) << history.dump();
  CommandResult predict = tenfold("predict " + path("regression.h5") + " --data " + path("x.npy") + " --count 1 "
                                  "--output " + path("predictions.npy"));
  ASSERT_EQ(predict.exit_code, 0) << predict.output;
  Tensor predictions = datasets::read_npy(path("predictions.npy"));
  ASSERT_EQ(predictions.shape(), Shape({512, 1}));
  EXPECT_NEAR(predictions.data<float>()[0], y.data<float>()[0], 0.5);

  // An .npz with keras.datasets' names (as np.savez writes one): x_test and y_test validate.
  Tensor features(Shape({64, 5})), classes(Shape({64}), DType::int32);
  for (int64_t i = 0; i < 64; ++i) {
    features.data<float>()[5 * i] = random.uniform(-1, 1);
    classes.data<int32_t>()[i] = features.data<float>()[5 * i] > 0 ? 2 : 0;
  }
  std::map<std::string, std::string> entries;
  for (const auto& [name, array] : {std::pair{"x_train", features}, std::pair{"y_train", classes},
                                    std::pair{"x_test", features.slice_batch(0, 16)},
                                    std::pair{"y_test", classes.slice_batch(0, 16)}}) {
    datasets::write_npy(path("entry.npy"), array);
    std::ifstream bytes(path("entry.npy"), std::ios::binary);
    entries[std::string(name) + ".npy"] = std::string(std::istreambuf_iterator<char>(bytes), {});
  }
  io::write_zip(path("splits.npz"), entries);
  CommandResult npz = tenfold("train --model " + fixture_path("models/tabular.keras") + " --data " +
                              path("splits.npz") + " --epochs 1 --verbose 2 --loss sparse_categorical_crossentropy "
                              "--optimizer sgd --metrics accuracy,sparse_top_k_categorical_accuracy");
  ASSERT_EQ(npz.exit_code, 0) << npz.output;
  EXPECT_NE(npz.output.find("Training with optimizer SGD (learning rate 0.01), loss sparse_categorical_crossentropy, "
                            "metrics [accuracy, sparse_top_k_categorical_accuracy]\n"),
            std::string::npos)
      << npz.output;
  EXPECT_NE(npz.output.find("val_sparse_top_k_categorical_accuracy: 1.0000"), std::string::npos) << npz.output;
}

TEST_F(UserData, ImageDirectoryOfJpegsThroughTrainEvaluatePredict) {
  // photos_cnn.h5 takes 16x16 RGB images; the photos are other sizes, JPEG and PNG.
  const std::string photos = fixture_path("images/photos");
  CommandResult train = tenfold("train --model " + fixture_path("models/photos_cnn.h5") + " --data " + photos +
                                " --epochs 2 --batch-size 2 --verbose 2 --devices 1 --validation-split 0.4 --seed 2 "
                                "--save " + path("photos.keras"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_NE(train.output.find("Using 2 files for validation."), std::string::npos) << train.output;
  EXPECT_NE(train.output.find("Using 3 files for training."), std::string::npos) << train.output;
  EXPECT_NE(train.output.find("Training with optimizer SGD (learning rate 0.05), loss sparse_categorical_crossentropy, "
                              "metrics [accuracy] from the model file"),
            std::string::npos)
      << train.output;
  CommandResult evaluate = tenfold("evaluate " + path("photos.keras") + " --data " + photos);
  ASSERT_EQ(evaluate.exit_code, 0) << evaluate.output;
  CommandResult predict = tenfold("predict " + path("photos.keras") + " --data " + photos + " --output " +
                                  path("predictions.csv"));
  ASSERT_EQ(predict.exit_code, 0) << predict.output;
  std::ifstream csv(path("predictions.csv"));
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(header, "sample,file,label,predicted,predicted_class,p0,p1");
  EXPECT_NE(row.find(photos + "/cats/a.jpg,0,"), std::string::npos) << row;
  EXPECT_TRUE(row.find(",cats,") != std::string::npos || row.find(",dogs,") != std::string::npos) << row;
}

// The same samples as a CSV or image folder and as NumPy arrays: the same predictions.
TEST_F(UserData, ArraysPredictAsTheTablesAndImagesTheyHold) {
  const std::string table = write_table(50);
  const std::string tabular = fixture_path("models/tabular.keras");
  datasets::CsvTable read = datasets::read_csv(table, {"kind", {"colour"}});
  datasets::write_npy(path("table.npy"), read.features);
  ASSERT_EQ(tenfold("predict " + tabular + " --data " + table + " --label kind --categorical colour --output " +
                    path("from_csv.npy")).exit_code, 0);
  ASSERT_EQ(tenfold("predict " + tabular + " --data " + path("table.npy") + " --output " + path("from_npy.npy")).exit_code, 0);
  EXPECT_TRUE(testing::all_close(datasets::read_npy(path("from_npy.npy")), datasets::read_npy(path("from_csv.npy")), 0, 0));

  // The images as the model sees them (resized to 16x16 RGB, in file order), as an array.
  const std::string photos = fixture_path("images/photos");
  data::ImageDirectoryOptions options;
  options.image_size = {16, 16};
  options.batch_size = 0;
  options.shuffle = false;
  std::vector<data::Element> images = data::image_dataset_from_directory(photos, options).dataset.collect();
  Tensor stacked(Shape({int64_t(images.size()), 16, 16, 3}));
  for (size_t i = 0; i < images.size(); ++i) {
    std::copy_n(images[i][0].data<float>(), 16 * 16 * 3, stacked.data<float>() + i * 16 * 16 * 3);
  }
  datasets::write_npy(path("photos.npy"), stacked);
  const std::string photos_cnn = fixture_path("models/photos_cnn.h5");
  ASSERT_EQ(tenfold("predict " + photos_cnn + " --data " + photos + " --output " + path("from_images.npy")).exit_code, 0);
  ASSERT_EQ(tenfold("predict " + photos_cnn + " --data " + path("photos.npy") + " --output " + path("from_array.npy")).exit_code, 0);
  EXPECT_TRUE(testing::all_close(datasets::read_npy(path("from_array.npy")), datasets::read_npy(path("from_images.npy")), 0, 0));
}

TEST_F(UserData, DataThatDoesNotFitTheModelIsRefusedBeforeTraining) {
  const std::string table = write_table(20);
  auto refused = [&](const std::string& arguments, const std::string& expected) {
    CommandResult result = tenfold("train --epochs 1 --verbose 2 " + arguments);
    EXPECT_EQ(result.exit_code, 1) << arguments;
    EXPECT_NE(result.output.find(expected), std::string::npos) << arguments << "\n" << result.output;
    EXPECT_EQ(result.output.find("Epoch 1/1"), std::string::npos) << "refused before training: " << result.output;
  };
  const std::string tabular = " --model " + fixture_path("models/tabular.keras");
  refused(tabular + " --data " + table + " --label kind",
          "column 'colour' holds text ('");
  refused(tabular + " --data " + table + " --label kind --categorical colour,shade",
          "has no column 'shade' (--categorical); its columns: a, b, colour, kind");
  refused(tabular + " --data " + table + " --label a --categorical colour,kind",
          "takes samples of shape (5,) but " + table + " holds samples of shape (");
  refused(" --data " + table + " --label kind --categorical colour",
          "model 'sequential' takes samples of shape (28, 28, 1) but");
  Tensor labels(Shape({5}), DType::int32);
  labels.data<int32_t>()[3] = 7;
  datasets::write_npy(path("labels.npy"), labels);
  datasets::write_npy(path("x.npy"), Tensor(Shape({5, 5})));
  refused(tabular + " --data " + path("x.npy") + " --labels " + path("labels.npy"), "7");
  refused(tabular + " --data " + path("x.npy"), "has no labels: give them with --labels Y.npy");
  refused(tabular + " --data " + fixture_path("data/arrays/f4.npy") + " --labels " + path("labels.npy"),
          "takes samples of shape (5,) but");
  refused(" --model " + fixture_path("models/photos_cnn.h5") + " --data " + fixture_path("images/shapes"),
          "holds 3 classes (subdirectories) but model 'photos_cnn' gives 2 outputs");
  refused(tabular + " --data " + fixture_path("data/arrays/f4.npy") + " --label kind",
          "--label and --categorical name columns of a CSV file");
  refused(tabular + " --data " + fixture_path("data/arrays/splits.npz") + " --labels " + path("labels.npy"),
          "--labels goes with --data X.npy");
  refused(tabular + " --data " + table + " --label kind --categorical colour --freeze dense_9",
          "--freeze: model 'tabular' has no layer 'dense_9'; its layers: dense, dense_1");
  // Image folders: a file that is not an image, a truncated JPEG, an empty class folder.
  const std::string photos_cnn = " --model " + fixture_path("models/photos_cnn.h5");
  auto photos_copy = [&](const std::string& name) {
    fs::copy(fixture_path("images/photos"), path(name), fs::copy_options::recursive);
    return path(name);
  };
  const std::string misnamed = photos_copy("misnamed");
  std::ofstream(misnamed + "/cats/notes.jpg") << "not an image";
  refused(photos_cnn + " --data " + misnamed, misnamed + "/cats/notes.jpg is neither a PNG nor a JPEG image");
  const std::string truncated = photos_copy("truncated");
  fs::resize_file(truncated + "/dogs/d.jpg", fs::file_size(truncated + "/dogs/d.jpg") / 2);
  refused(photos_cnn + " --data " + truncated, truncated + "/dogs/d.jpg is truncated");
  const std::string empty = photos_copy("empty");
  fs::remove_all(empty + "/dogs");
  fs::create_directories(empty + "/dogs");
  refused(photos_cnn + " --data " + empty, empty + "/dogs holds no PNG or JPEG images");
  refused(tabular + " --data " + table + " --label kind --categorical colour --validation-split 0.2 "
                    "--validation-data " + table,
          "give --validation-split or --validation-data, not both");
}

}  // namespace
}  // namespace tenfold
