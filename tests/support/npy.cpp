#include "support/npy.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "datasets/numpy.h"

namespace tenfold::testing {

namespace {

datasets::NpyArray load(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    throw Error(ErrorCode::not_found, "fixture " + path + " is missing; run make fixtures");
  }
  std::ifstream file(path, std::ios::binary);
  return datasets::parse_npy({std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()}, path);
}

}  // namespace

Tensor read_npy(const std::string& path) {
  datasets::NpyArray array = load(path);
  Tensor tensor = array.to_tensor(path);
  if (tensor.dtype() != DType::uint8) return tensor;
  // Fixtures of uint8 or bool hold labels or masks: the tests compare them as int32.
  Tensor wide(tensor.shape(), DType::int32);
  for (int64_t i = 0; i < tensor.num_elements(); ++i) wide.data<int32_t>()[i] = tensor.data<uint8_t>()[i];
  return wide;
}

std::vector<double> read_npy_doubles(const std::string& path, Shape* shape) {
  datasets::NpyArray array = load(path);
  if (shape) *shape = array.shape;
  return array.to_doubles();
}

}  // namespace tenfold::testing
