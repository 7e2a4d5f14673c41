#include "datasets/idx.h"

#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>

#include "core/error.h"

namespace tenfold::datasets {

namespace {

constexpr uint8_t unsigned_byte_type = 0x08;
constexpr int max_dimensions = 8;
// Bigger than any IDX data set; a header claiming more is corrupt, not a reason to allocate.
constexpr uint64_t max_payload_bytes = uint64_t(1) << 34;

/// Reads a file through zlib, which passes raw (uncompressed) files through unchanged.
class CompressedReader {
 public:
  explicit CompressedReader(const std::string& path) : path_(path) {
    if (!std::filesystem::is_regular_file(path)) {
      throw Error(ErrorCode::not_found, "IDX file " + path + " does not exist");
    }
    file_ = gzopen(path.c_str(), "rb");
    if (file_ == nullptr) throw Error(ErrorCode::not_found, "cannot open IDX file " + path);
  }
  ~CompressedReader() { gzclose(file_); }
  CompressedReader(const CompressedReader&) = delete;
  CompressedReader& operator=(const CompressedReader&) = delete;

  /// Reads up to `bytes`; returns how many were read.
  size_t read(void* destination, size_t bytes) {
    size_t total = 0;
    auto* out = static_cast<char*>(destination);
    while (total < bytes) {
      unsigned chunk = unsigned(std::min<size_t>(bytes - total, 1u << 30));
      int got = gzread(file_, out + total, chunk);
      if (got < 0) {
        int code = 0;
        const char* message = gzerror(file_, &code);
        throw Error(ErrorCode::data_loss, "IDX file " + path_ + " is corrupt: " + message);
      }
      if (got == 0) break;
      total += size_t(got);
    }
    return total;
  }

  void read_exactly(void* destination, size_t bytes, const std::string& what) {
    size_t got = read(destination, bytes);
    if (got != bytes) {
      throw Error(ErrorCode::data_loss, "IDX file " + path_ + " is truncated: its " + what +
                                            " needs " + std::to_string(bytes) + " bytes, only " +
                                            std::to_string(got) + " remain");
    }
  }

 private:
  std::string path_;
  gzFile file_;
};

// Deflate expands at most 1032:1, which bounds what a gzip file of a given size can hold.
constexpr uint64_t max_deflate_ratio = 1032;

/// The size the header declares checked against the file before anything is allocated from
/// it: the file's size for a raw file; for a compressed one, the most it can hold and gzip's
/// trailer (the uncompressed size mod 2^32).
void check_declared_size(const std::string& path, uint64_t declared) {
  uint64_t file_size = std::filesystem::file_size(path);
  std::ifstream file(path, std::ios::binary);
  unsigned char start[2] = {0, 0};
  file.read(reinterpret_cast<char*>(start), 2);
  bool compressed = start[0] == 0x1f && start[1] == 0x8b;
  uint64_t actual = file_size;
  if (compressed) {
    if (declared > max_deflate_ratio * file_size) {
      throw Error(ErrorCode::data_loss, "IDX file " + path + " declares " +
                                            std::to_string(declared) + " bytes, more than a " +
                                            std::to_string(file_size) +
                                            "-byte gzip file can hold: it is corrupt");
    }
    unsigned char trailer[4] = {0, 0, 0, 0};
    file.seekg(std::streamoff(file_size) - 4);
    file.read(reinterpret_cast<char*>(trailer), 4);
    actual = uint64_t(trailer[0]) | uint64_t(trailer[1]) << 8 | uint64_t(trailer[2]) << 16 |
             uint64_t(trailer[3]) << 24;
    declared &= 0xffffffffULL;
  }
  if (declared != actual) {
    throw Error(ErrorCode::data_loss,
                "IDX file " + path + " is truncated or corrupt: its header declares " +
                    std::to_string(declared) + " bytes, the file " +
                    (compressed ? "decompresses to " : "holds ") + std::to_string(actual));
  }
}

}  // namespace

Tensor read_idx(const std::string& path) {
  CompressedReader reader(path);
  uint8_t magic[4];
  reader.read_exactly(magic, 4, "magic number");
  if (magic[0] != 0 || magic[1] != 0) {
    throw Error(ErrorCode::data_loss, "file " + path +
                                          " is not an IDX file (its magic number does not start "
                                          "with two zero bytes)");
  }
  if (magic[2] != unsigned_byte_type) {
    throw Error(ErrorCode::invalid_argument,
                "IDX file " + path + " holds element type 0x" +
                    std::to_string(magic[2] >> 4) + std::to_string(magic[2] & 15) +
                    "; only unsigned bytes (0x08), the MNIST type, are supported");
  }
  int dimensions = magic[3];
  if (dimensions < 1 || dimensions > max_dimensions) {
    throw Error(ErrorCode::data_loss, "IDX file " + path + " declares " +
                                          std::to_string(dimensions) +
                                          " dimensions; expected 1 to 8");
  }
  std::vector<int64_t> dims;
  uint64_t payload = 1;
  for (int i = 0; i < dimensions; ++i) {
    uint8_t bytes[4];
    reader.read_exactly(bytes, 4, "header");
    uint64_t dim = uint64_t(bytes[0]) << 24 | uint64_t(bytes[1]) << 16 | uint64_t(bytes[2]) << 8 |
                   uint64_t(bytes[3]);
    if (dim != 0 && payload > max_payload_bytes / dim) {
      throw Error(ErrorCode::data_loss, "IDX file " + path +
                                            " declares dimensions whose product exceeds " +
                                            std::to_string(max_payload_bytes) + " bytes");
    }
    payload *= dim;
    dims.push_back(int64_t(dim));
  }
  check_declared_size(path, 4 + 4 * uint64_t(dimensions) + payload);
  Tensor tensor = Tensor::uninitialized(Shape(dims), DType::uint8);
  reader.read_exactly(tensor.raw_data(), size_t(payload), "data");
  char extra;
  if (reader.read(&extra, 1) != 0) {
    throw Error(ErrorCode::data_loss, "IDX file " + path +
                                          " is longer than its header declares (" +
                                          std::to_string(4 + 4 * dimensions + payload) +
                                          " bytes); it is corrupt or not an IDX file");
  }
  return tensor;
}

Tensor images_to_float(const Tensor& images, float scale) {
  check_argument(images.shape().rank() == 3,
                 "images must be (count, height, width), got " + images.shape().to_string());
  Tensor result(Shape{images.shape()[0], images.shape()[1], images.shape()[2], 1});
  const uint8_t* from = images.data<uint8_t>();
  float* to = result.data<float>();
  const int64_t count = images.num_elements();
  for (int64_t i = 0; i < count; ++i) to[i] = float(from[i]) * scale;
  return result;
}

Tensor labels_to_int32(const Tensor& labels) {
  Tensor result(labels.shape(), DType::int32);
  const uint8_t* from = labels.data<uint8_t>();
  int32_t* to = result.data<int32_t>();
  const int64_t count = labels.num_elements();
  for (int64_t i = 0; i < count; ++i) to[i] = from[i];
  return result;
}

}  // namespace tenfold::datasets
