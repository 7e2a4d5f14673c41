#include "support/npy.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/error.h"

namespace tenfold::testing {

namespace {

struct NpyArray {
  std::string descr;
  Shape shape;
  std::string data;
};

NpyArray load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ErrorCode::not_found, "fixture " + path + " is missing; run make fixtures");
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    throw Error(ErrorCode::data_loss, path + " is not a .npy file");
  }
  int major = bytes[6];
  size_t header_length = major == 1 ? size_t(uint8_t(bytes[8])) | size_t(uint8_t(bytes[9])) << 8
                                    : size_t(uint8_t(bytes[8])) | size_t(uint8_t(bytes[9])) << 8 |
                                          size_t(uint8_t(bytes[10])) << 16 |
                                          size_t(uint8_t(bytes[11])) << 24;
  size_t header_start = major == 1 ? 10 : 12;
  std::string header = bytes.substr(header_start, header_length);
  std::smatch match;
  NpyArray array;
  if (!std::regex_search(header, match, std::regex("'descr': '([^']+)'"))) {
    throw Error(ErrorCode::data_loss, path + ": no descr in header");
  }
  array.descr = match[1];
  if (header.find("'fortran_order': True") != std::string::npos) {
    throw Error(ErrorCode::invalid_argument, path + ": Fortran order is not supported");
  }
  std::regex_search(header, match, std::regex("'shape': \\(([^)]*)\\)"));
  std::vector<int64_t> dims;
  std::stringstream shape_text(match[1].str());
  std::string item;
  while (std::getline(shape_text, item, ',')) {
    if (item.find_first_not_of(' ') != std::string::npos) dims.push_back(std::stoll(item));
  }
  array.shape = Shape(dims);
  array.data = bytes.substr(header_start + header_length);
  return array;
}

template <typename T>
std::vector<double> as_doubles(const std::string& data) {
  std::vector<double> values(data.size() / sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    T value;
    std::memcpy(&value, data.data() + i * sizeof(T), sizeof(T));
    values[i] = double(value);
  }
  return values;
}

std::vector<double> doubles(const NpyArray& array, const std::string& path) {
  if (array.descr == "<f4") return as_doubles<float>(array.data);
  if (array.descr == "<f8") return as_doubles<double>(array.data);
  if (array.descr == "<i4") return as_doubles<int32_t>(array.data);
  if (array.descr == "<i8") return as_doubles<int64_t>(array.data);
  throw Error(ErrorCode::invalid_argument, path + ": dtype " + array.descr + " not supported");
}

}  // namespace

Tensor read_npy(const std::string& path) {
  NpyArray array = load(path);
  std::vector<double> values = doubles(array, path);
  bool integer = array.descr == "<i4" || array.descr == "<i8";
  Tensor tensor(array.shape, integer ? DType::int32 : DType::float32);
  for (size_t i = 0; i < values.size(); ++i) {
    if (integer) {
      tensor.data<int32_t>()[i] = int32_t(values[i]);
    } else {
      tensor.data<float>()[i] = float(values[i]);
    }
  }
  return tensor;
}

std::vector<double> read_npy_doubles(const std::string& path, Shape* shape) {
  NpyArray array = load(path);
  if (shape) *shape = array.shape;
  return doubles(array, path);
}

}  // namespace tenfold::testing
