// image_dataset_from_directory against Keras' own (tools/make_image_fixtures.py), and its errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "data/image_directory.h"
#include "datasets/jpeg.h"
#include "support/check.h"
#include "support/npy.h"

namespace tenfold::data {
namespace {

using testing::error_of;

namespace fs = std::filesystem;
using testing::fixture_path;
using testing::read_npy;

const std::string shapes = fixture_path("images/shapes");

ImageDirectoryOptions unshuffled(const std::string& color_mode) {
  ImageDirectoryOptions options;
  options.color_mode = color_mode;
  options.image_size = {5, 7};
  options.batch_size = 0;
  options.shuffle = false;
  return options;
}

/// A scratch directory, removed at the end of the test.
struct ScratchDirectory {
  fs::path path = fs::temp_directory_path() /
                  ("tenfold_images_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                   "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  ScratchDirectory() { fs::remove_all(path); fs::create_directories(path); }
  ~ScratchDirectory() { fs::remove_all(path); }
  /// A copy of the fixture's classes to alter.
  void copy_shapes() { fs::copy(shapes, path, fs::copy_options::recursive); }
};

TEST(ImageDirectory, MatchesKerasInEveryColorMode) {
  std::ifstream json_file(fixture_path("images/expected/files.json"));
  nlohmann::json expected = nlohmann::json::parse(json_file);
  for (std::string mode : {"grayscale", "rgb", "rgba"}) {
    SCOPED_TRACE(mode);
    ImageDirectoryDataset found = image_dataset_from_directory(shapes, unshuffled(mode));
    EXPECT_EQ(found.class_names, expected["class_names"].get<std::vector<std::string>>());
    std::vector<std::string> files;
    for (const std::string& path : found.file_paths) files.push_back(fs::relative(path, shapes).string());
    EXPECT_EQ(files, expected["files"].get<std::vector<std::string>>());

    std::vector<Element> elements = found.dataset.collect();
    Tensor images = read_npy(fixture_path("images/expected/" + mode + "_images.npy"));
    Tensor labels = read_npy(fixture_path("images/expected/" + mode + "_labels.npy"));
    ASSERT_EQ(int64_t(elements.size()), images.shape()[0]);
    for (size_t i = 0; i < elements.size(); ++i) {
      SCOPED_TRACE(files[i]);
      // Pixel values are 0..255: agreement to 1e-3 is TensorFlow's float rounding, no more.
      EXPECT_TRUE(testing::all_close(elements[i][0], images.row(int64_t(i)), 1e-5, 1e-3));
      EXPECT_EQ(elements[i][1].data<int32_t>()[0], labels.data<int32_t>()[i]);
    }
  }
}

TEST(ImageDirectory, CategoricalLabelsAndElementSpec) {
  ImageDirectoryOptions options = unshuffled("rgb");
  options.label_mode = "categorical";
  ImageDirectoryDataset found = image_dataset_from_directory(shapes, options);
  Tensor expected = read_npy(fixture_path("images/expected/categorical_labels.npy"));
  std::vector<Element> elements = found.dataset.collect();
  for (size_t i = 0; i < elements.size(); ++i) {
    EXPECT_TRUE(testing::all_close(elements[i][1], expected.row(int64_t(i)), 0, 0));
  }
  options.batch_size = 4;
  Dataset batched = image_dataset_from_directory(shapes, options).dataset;
  EXPECT_EQ(batched.cardinality(), 2);
  std::vector<TensorSpec> spec = {{{-1, 5, 7, 3}, DType::float32}, {{-1, 3}, DType::float32}};
  EXPECT_EQ(batched.element_spec(), spec);
  std::vector<Element> batches = batched.collect();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1][0].shape(), Shape({2, 5, 7, 3}));
}

TEST(ImageDirectory, SeededShuffleAndDisjointValidationSplit) {
  ImageDirectoryOptions options = unshuffled("grayscale");
  options.shuffle = true;
  options.seed = 5;
  EXPECT_EQ(image_dataset_from_directory(shapes, options).file_paths,
            image_dataset_from_directory(shapes, options).file_paths);

  options.validation_split = 0.34;  // int(0.34 * 6) = 2 files held out
  options.subset = "training";
  std::vector<std::string> training = image_dataset_from_directory(shapes, options).file_paths;
  options.subset = "validation";
  ImageDirectoryDataset validation = image_dataset_from_directory(shapes, options);
  EXPECT_EQ(training.size(), 4u);
  EXPECT_EQ(validation.file_paths.size(), 2u);
  EXPECT_EQ(validation.dataset.collect().size(), 2u);
  std::set<std::string> all(training.begin(), training.end());
  all.insert(validation.file_paths.begin(), validation.file_paths.end());
  EXPECT_EQ(all.size(), 6u);
}

TEST(ImageDirectory, ClearErrors) {
  EXPECT_NE(error_of([] { image_dataset_from_directory("/nonexistent/images"); })
                .find("/nonexistent/images does not exist"),
            std::string::npos);
  ScratchDirectory empty;
  fs::create_directories(empty.path / "cats");
  EXPECT_NE(error_of([&] { image_dataset_from_directory(empty.path.string()); }).find("no images found"),
            std::string::npos);

  ImageDirectoryOptions binary;
  binary.label_mode = "binary";
  EXPECT_NE(error_of([&] { image_dataset_from_directory(shapes, binary); }).find("exactly 2 classes, found 3"),
            std::string::npos);
  ImageDirectoryOptions named;
  named.class_names = {"circles", "hexagons"};
  EXPECT_NE(error_of([&] { image_dataset_from_directory(shapes, named); }).find("\"hexagons\""),
            std::string::npos);
  ImageDirectoryOptions split;
  split.validation_split = 0.2;
  split.subset = "training";
  EXPECT_NE(error_of([&] { image_dataset_from_directory(shapes, split); }).find("give a seed"),
            std::string::npos);
  ImageDirectoryOptions no_subset;
  no_subset.validation_split = 0.2;
  EXPECT_NE(error_of([&] { image_dataset_from_directory(shapes, no_subset); }).find("give both"),
            std::string::npos);

  ScratchDirectory bitmap;
  bitmap.copy_shapes();
  std::ofstream(bitmap.path / "circles" / "photo.bmp") << "bmp bytes";
  EXPECT_NE(error_of([&] { image_dataset_from_directory(bitmap.path.string()); })
                .find("photo.bmp is a bmp image; Tenfold reads PNG and JPEG images"),
            std::string::npos);
}

TEST(ImageDirectory, JpegImagesMatchKeras) {
  // Colour and grayscale JPEGs, 4:2:0 and 4:4:4 chroma, progressive, and a PNG among them.
  const std::string photos = fixture_path("images/photos");
  for (std::string mode : {"grayscale", "rgb"}) {
    SCOPED_TRACE(mode);
    std::vector<Element> elements = image_dataset_from_directory(photos, unshuffled(mode)).dataset.collect();
    Tensor images = read_npy(fixture_path("images/expected/photos_" + mode + "_images.npy"));
    Tensor labels = read_npy(fixture_path("images/expected/photos_" + mode + "_labels.npy"));
    ASSERT_EQ(int64_t(elements.size()), images.shape()[0]);
    for (size_t i = 0; i < elements.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_TRUE(testing::all_close(elements[i][0], images.row(int64_t(i)), 1e-5, 1e-3));
      EXPECT_EQ(elements[i][1].data<int32_t>()[0], labels.data<int32_t>()[i]);
    }
  }
  // JPEG has no alpha; TensorFlow refuses 4 channels too.
  EXPECT_NE(error_of([&] { image_dataset_from_directory(photos, unshuffled("rgba")).dataset.collect(); })
                .find("a.jpg is a JPEG image, which has no alpha channel"),
            std::string::npos);
}

TEST(ImageDirectory, DamagedJpegNamesTheFileWhenRead) {
  ScratchDirectory damaged;
  fs::copy(fixture_path("images/photos"), damaged.path, fs::copy_options::recursive);
  fs::path victim = damaged.path / "cats" / "a.jpg";
  fs::resize_file(victim, 40);  // the header, cut inside
  fs::path cut = damaged.path / "cats" / "c.jpeg";
  fs::resize_file(cut, fs::file_size(cut) * 2 / 3);  // the image data, cut inside
  std::ofstream(damaged.path / "dogs" / "d.jpg", std::ios::trunc) << "not an image";
  EXPECT_NE(error_of([&] { check_image_files({cut.string()}); }).find(cut.string() + " is truncated"), std::string::npos);
  EXPECT_NE(error_of([&] { check_image_files({(damaged.path / "dogs" / "d.jpg").string()}); })
                .find("d.jpg is neither a PNG nor a JPEG image"),
            std::string::npos);
  check_image_files({fixture_path("images/photos/cats/b.JPEG"), fixture_path("images/photos/dogs/e.png")});
  // Decoded, the cut image's data runs out: libjpeg would fill it with gray, TensorFlow refuses.
  std::ifstream whole(fixture_path("images/photos/cats/a.jpg"), std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(whole)), std::istreambuf_iterator<char>());
  bytes.resize(bytes.size() - 200);  // past the header's tables, inside the scan
  EXPECT_NE(error_of([&] { datasets::decode_jpeg(bytes, 3, "a.jpg"); }).find("a.jpg is a truncated JPEG file"),
            std::string::npos);
  for (const fs::path& path : {victim, damaged.path / "dogs" / "d.jpg"}) {
    ImageDirectoryOptions options = unshuffled("rgb");
    options.class_names = {path.parent_path().filename().string()};
    std::string error = error_of([&] { image_dataset_from_directory(damaged.path.string(), options).dataset.collect(); });
    EXPECT_NE(error.find(path.string()), std::string::npos) << error;
  }
}

TEST(ImageDirectory, DamagedPngNamesTheFileWhenRead) {
  ScratchDirectory damaged;
  damaged.copy_shapes();
  fs::path victim = damaged.path / "circles" / "a.png";
  fs::resize_file(victim, fs::file_size(victim) / 2);  // truncated
  std::ofstream(damaged.path / "squares" / "y.png", std::ios::trunc) << "not a png at all";
  ImageDirectoryOptions options = unshuffled("rgb");
  Dataset dataset = image_dataset_from_directory(damaged.path.string(), options).dataset;
  std::string message = error_of([&] { dataset.collect(); });
  EXPECT_NE(message.find("a.png is a damaged PNG file"), std::string::npos) << message;
  options.class_names = {"squares"};
  message = error_of([&] { image_dataset_from_directory(damaged.path.string(), options).dataset.collect(); });
  EXPECT_NE(message.find("y.png is neither a PNG nor a JPEG image"), std::string::npos) << message;
}

}  // namespace
}  // namespace tenfold::data
