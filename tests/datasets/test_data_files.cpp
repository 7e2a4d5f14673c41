// NumPy and CSV files against what NumPy and pandas read from them
// (tools/make_data_fixtures.py), and their errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "datasets/csv.h"
#include "datasets/numpy.h"
#include "support/check.h"
#include "support/npy.h"

namespace tenfold::datasets {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::fixture_path;

nlohmann::json expected_json(const std::string& relative) {
  std::ifstream file(fixture_path(relative));
  return nlohmann::json::parse(file);
}

std::vector<double> values_of(const Tensor& tensor) {
  std::vector<double> values;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    switch (tensor.dtype()) {
      case DType::float32: values.push_back(tensor.data<float>()[i]); break;
      case DType::int32: values.push_back(tensor.data<int32_t>()[i]); break;
      case DType::uint8: values.push_back(tensor.data<uint8_t>()[i]); break;
      default: ADD_FAILURE() << "unexpected dtype";
    }
  }
  return values;
}

std::string scratch(const std::string& name) {
  return (fs::temp_directory_path() / ("tenfold_data_files_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(NumpyFiles, EveryDtypeAndOrderReadsAsNumpyLoadsIt) {
  nlohmann::json expected = expected_json("data/arrays/expected.json")["arrays"];
  const std::map<std::string, DType> dtypes = {
      {"fortran_f8", DType::float32}, {"f4", DType::float32}, {"images_u1", DType::uint8},
      {"labels_i8", DType::int32},   {"labels_u2", DType::int32}, {"mask_b1", DType::uint8},
      {"scalar_f4", DType::float32}};
  for (const auto& [name, dtype] : dtypes) {
    SCOPED_TRACE(name);
    Tensor array = read_npy(fixture_path("data/arrays/" + name + ".npy"));
    EXPECT_EQ(array.dtype(), dtype);
    EXPECT_EQ(array.shape(), Shape(expected[name]["shape"].get<std::vector<int64_t>>()));
    std::vector<double> want = expected[name]["values"];
    if (dtype == DType::float32) {  // float64 values become float32: equal to its rounding
      EXPECT_TRUE(testing::all_close(array.values<float>(), want, 1e-7, 0));
    } else {
      EXPECT_EQ(values_of(array), want);
    }
  }
}

TEST(NumpyFiles, ArchivesOfSavezAndSavezCompressed) {
  auto xy = read_npz(fixture_path("data/arrays/xy.npz"));
  ASSERT_EQ(xy.size(), 2u);
  EXPECT_EQ(values_of(xy.at("x")), values_of(read_npy(fixture_path("data/arrays/f4.npy"))));
  EXPECT_EQ(values_of(xy.at("y")), expected_json("data/arrays/expected.json")["arrays"]["xy.npz:y"]["values"].get<std::vector<double>>());
  auto splits = read_npz(fixture_path("data/arrays/splits.npz"));  // deflated entries
  EXPECT_EQ(splits.size(), 4u);
  EXPECT_EQ(values_of(splits.at("x_train")), values_of(read_npy(fixture_path("data/arrays/images_u1.npy"))));
  EXPECT_EQ(splits.at("y_test").shape(), Shape({1}));
}

TEST(NumpyFiles, WritesWhatNumpySaves) {
  // np.save of a C-order float32 array: Tenfold's file is the same bytes.
  const std::string original = fixture_path("data/arrays/f4.npy");
  const std::string written = scratch("f4.npy");
  write_npy(written, read_npy(original));
  std::ifstream a(original, std::ios::binary), b(written, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), std::string(std::istreambuf_iterator<char>(b), {}));
  fs::remove(written);
}

TEST(NumpyFiles, UnreadableArraysAreClearErrors) {
  EXPECT_NE(error_of([] { read_npy(fixture_path("data/arrays/big_endian.npy")); }).find("dtype '>f4'"), std::string::npos);
  EXPECT_NE(error_of([] { read_npy(fixture_path("data/arrays/strings.npy")); }).find("dtype '<U1'"), std::string::npos);
  EXPECT_NE(error_of([] { read_npy("/nonexistent/x.npy"); }).find("/nonexistent/x.npy does not exist"), std::string::npos);
  EXPECT_NE(error_of([] { read_npz(fixture_path("data/arrays/f4.npy")); }).find("not a zip archive (a NumPy .npz file)"),
            std::string::npos);

  std::ifstream file(fixture_path("data/arrays/f4.npy"), std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(file), {});
  const std::string truncated = scratch("truncated.npy");
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() - 4);
  EXPECT_NE(error_of([&] { read_npy(truncated); }).find("its shape and dtype make 60 bytes but it holds 56"),
            std::string::npos);
  // A header claiming a huge shape is refused before anything is allocated.
  std::string huge = bytes;
  huge.replace(huge.find("(5, 3)"), 6, "(9999999999, 99999999)");
  std::ofstream(truncated, std::ios::binary | std::ios::trunc) << huge;
  EXPECT_NE(error_of([&] { read_npy(truncated); }).find("not a valid .npy file"), std::string::npos);
  // Labels past int32, even near int64's limit (a fuzzer's find: converting that to int64 for
  // the message was undefined behaviour).
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ').push_back('\n');
  std::string labels = std::string("\x93NUMPY\x01\x00", 8) + char(header.size() % 256) + char(header.size() / 256) + header;
  for (int64_t value : {int64_t(3), int64_t(0x7ffffffffffffff3)}) labels.append(reinterpret_cast<const char*>(&value), 8);
  std::ofstream(truncated, std::ios::binary | std::ios::trunc) << labels;
  const std::string error = error_of([&] { read_npy(truncated); });
  EXPECT_NE(error.find("holds 9223372036854775808 at index 1, outside the int32 range"), std::string::npos) << error;
  fs::remove(truncated);
}

TEST(CsvFiles, TablesReadAsPandasAndGetDummiesMakeThem) {
  nlohmann::json expected = expected_json("data/tables/expected.json")["tables"];
  for (const auto& [name, table] : expected.items()) {
    SCOPED_TRACE(name);
    CsvOptions options;
    options.label = table["label"];
    options.categorical = table["categorical"].get<std::vector<std::string>>();
    CsvTable read = read_csv(fixture_path("data/tables/" + name + ".csv"), options);
    EXPECT_EQ(read.feature_names, table["feature_names"].get<std::vector<std::string>>());
    EXPECT_EQ(read.class_names, table["class_names"].get<std::vector<std::string>>());
    Tensor features = testing::read_npy(fixture_path("data/tables/" + name + "_features.npy"));
    Tensor labels = testing::read_npy(fixture_path("data/tables/" + name + "_labels.npy"));
    EXPECT_TRUE(testing::all_close(read.features, features, 0, 0));
    EXPECT_EQ(read.labels.dtype(), labels.dtype());
    EXPECT_EQ(values_of(read.labels), values_of(labels));
  }
  // Without a label: every column a feature (prediction).
  CsvTable unlabelled = read_csv(fixture_path("data/tables/digits.csv"));
  EXPECT_EQ(unlabelled.features.shape(), Shape({3, 3}));
  EXPECT_TRUE(unlabelled.labels.empty());
}

TEST(CsvFiles, TextColumnsMissingValuesAndRaggedRowsAreClearErrors) {
  const std::string plants = fixture_path("data/tables/plants.csv");
  EXPECT_NE(error_of([&] { read_csv(plants, {"species", {}}); })
                .find("column 'soil' holds text ('clay' on line 2); one-hot encode it with --categorical soil"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_csv(plants, {"kind", {"soil"}}); })
                .find("has no column 'kind' (--label); its columns: height, leaf, width, soil, species"),
            std::string::npos);
  const std::string path = scratch("broken.csv");
  std::ofstream(path) << "a,b,label\n1,2,0\n3,,1\n";
  EXPECT_NE(error_of([&] { read_csv(path, {"label", {}}); }).find("line 3: column 'b' has no value"), std::string::npos);
  std::ofstream(path, std::ios::trunc) << "a,b,label\n1,2,0\n3,4\n";
  EXPECT_NE(error_of([&] { read_csv(path, {"label", {}}); }).find("line 3 has 2 fields but the header names 3 columns"),
            std::string::npos);
  std::ofstream(path, std::ios::trunc) << "a,b\n";
  EXPECT_NE(error_of([&] { read_csv(path, {}); }).find("has a header but no rows"), std::string::npos);
  fs::remove(path);
}

}  // namespace
}  // namespace tenfold::datasets
