#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "datasets/mnist.h"
#include "datasets/idx.h"

namespace tenfold::datasets {
namespace {

namespace fs = std::filesystem;

class IdxFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("tenfold_idx_" + std::to_string(::getpid()));
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  std::string write(const std::string& name, const std::string& bytes, bool compress = false) {
    std::string path = (directory_ / name).string();
    if (compress) {
      gzFile file = gzopen(path.c_str(), "wb");
      gzwrite(file, bytes.data(), unsigned(bytes.size()));
      gzclose(file);
    } else {
      std::ofstream(path, std::ios::binary) << bytes;
    }
    return path;
  }

  static std::string idx(std::vector<uint32_t> dims, size_t payload_bytes, uint8_t type = 0x08) {
    std::string bytes = {0, 0, char(type), char(dims.size())};
    for (uint32_t dim : dims) {
      for (int shift : {24, 16, 8, 0}) bytes += char((dim >> shift) & 0xff);
    }
    for (size_t i = 0; i < payload_bytes; ++i) bytes += char(i % 10);
    return bytes;
  }

  std::string error_of(const std::string& path) {
    try {
      read_idx(path);
    } catch (const Error& error) {
      return error.what();
    }
    return "no error";
  }

  fs::path directory_;
};

TEST_F(IdxFiles, ReadsRawAndCompressed) {
  for (bool compress : {false, true}) {
    Tensor tensor = read_idx(write(compress ? "a.gz" : "a", idx({3, 2, 2}, 12), compress));
    EXPECT_EQ(tensor.shape(), (Shape{3, 2, 2}));
    EXPECT_EQ(tensor.data<uint8_t>()[11], 1);
  }
}

TEST_F(IdxFiles, RejectsBadFilesWithClearErrors) {
  EXPECT_NE(error_of(write("truncated", idx({3, 2, 2}, 11))).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(write("header", idx({3, 2, 2}, 0).substr(0, 9))).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(write("long", idx({3, 2, 2}, 13))).find("declares 28 bytes, the file holds 29"), std::string::npos);
  EXPECT_NE(error_of(write("long.gz", idx({3, 2, 2}, 13), true)).find("declares 28 bytes, the file decompresses to 29"), std::string::npos);
  // A small file declaring a large payload is rejected from its size, before allocating it.
  EXPECT_NE(error_of(write("claims.gz", idx({10, 28, 28}, 100), true)).find("decompresses to 116"), std::string::npos);
  EXPECT_NE(error_of(write("bomb.gz", idx({60000, 28, 28}, 100), true)).find("more than a"), std::string::npos);
  EXPECT_NE(error_of(write("magic", "\x01\x02\x08\x01" + std::string(8, 'x'))).find("not an IDX file"), std::string::npos);
  EXPECT_NE(error_of(write("type", idx({2}, 8, 0x0D))).find("only unsigned bytes"), std::string::npos);
  EXPECT_NE(error_of(write("dims", idx({}, 0))).find("0 dimensions"), std::string::npos);
  // Dimensions whose product overflows: rejected from the header, before any allocation.
  EXPECT_NE(error_of(write("huge", idx({0xffffffff, 0xffffffff, 0xffffffff}, 0))).find("exceeds"), std::string::npos);
  EXPECT_NE(error_of((directory_ / "absent").string()).find("does not exist"), std::string::npos);
  // A bit flipped inside compressed data: zlib's checksum catches it.
  std::string path = write("flipped.gz", idx({50, 20}, 1000), true);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() - 6] ^= 0x10;  // inside the CRC32 of the gzip trailer
  write("flipped.gz", bytes);
  EXPECT_THROW(read_idx(path), Error);
}

TEST_F(IdxFiles, ImageAndLabelCountsMustAgree) {
  write("train-images-idx3-ubyte", idx({3, 2, 2}, 12));
  write("train-labels-idx1-ubyte", idx({2}, 2));
  write("t10k-images-idx3-ubyte", idx({1, 2, 2}, 4));
  write("t10k-labels-idx1-ubyte", idx({1}, 1));
  try {
    load_idx_directory(directory_.string());
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("holds 3 images but"), std::string::npos) << error.what();
  }
  try {
    load_idx_directory((directory_ / "nowhere").string());
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::not_found);
    EXPECT_NE(std::string(error.what()).find("nowhere does not exist"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("t10k-labels-idx1-ubyte"), std::string::npos);
  }
  write("train-labels-idx1-ubyte", idx({3}, 3));
  std::filesystem::remove(directory_ / "t10k-labels-idx1-ubyte");
  try {
    load_idx_directory(directory_.string());
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("no t10k-labels-idx1-ubyte(.gz)"), std::string::npos);
  }
}

TEST(Mnist, DefaultDirectoryFollowsTheEnvironmentAndNamesItWhenEmpty) {
  ::setenv("TENFOLD_DATASETS", "/nonexistent/datasets", 1);
  EXPECT_EQ(mnist::default_directory(), "/nonexistent/datasets/mnist");
  try {
    mnist::load_data();
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/datasets/mnist does not exist"),
              std::string::npos);
  }
  ::unsetenv("TENFOLD_DATASETS");
}

TEST(FashionMnist, LoadsThePackagedDataSet) {
  auto data = fashion_mnist::load_data();
  EXPECT_EQ(data.train.images.shape(), (Shape{60000, 28, 28}));
  EXPECT_EQ(data.train.labels.shape(), (Shape{60000}));
  EXPECT_EQ(data.test.images.shape(), (Shape{10000, 28, 28}));
  std::vector<int> per_class(10);
  for (uint8_t label : data.train.labels.values<uint8_t>()) ++per_class[label];
  for (int count : per_class) EXPECT_EQ(count, 6000);
  Tensor images = images_to_float(data.test.images, 1.0f / 255.0f);
  EXPECT_EQ(images.shape(), (Shape{10000, 28, 28, 1}));
  float max = *std::max_element(images.values<float>().begin(), images.values<float>().end());
  EXPECT_FLOAT_EQ(max, 1.0f);
}

TEST(FashionMnist, AsDatasetsOfTheRecipesSlices) {
  auto data = fashion_mnist::load_data();
  auto datasets = fashion_mnist::load_datasets();
  EXPECT_EQ(datasets.train.cardinality(), 60000);
  EXPECT_EQ(datasets.test.cardinality(), 10000);
  std::vector<data::TensorSpec> spec = {{{28, 28, 1}, DType::float32}, {{}, DType::int32}};
  EXPECT_EQ(datasets.train.element_spec(), spec);
  auto first = datasets.test.iterate()->next();
  ASSERT_TRUE(first);
  EXPECT_EQ((*first)[1].data<int32_t>()[0], data.test.labels.data<uint8_t>()[0]);
  for (int i = 0; i < 28 * 28; ++i) {
    ASSERT_FLOAT_EQ((*first)[0].data<float>()[i], data.test.images.data<uint8_t>()[i] / 255.0f);
  }
}

}  // namespace
}  // namespace tenfold::datasets
