#pragma once
// Reads .npy files (the fixtures written by tools/*.py) into tensors: float32/float64 become
// float32, int32/int64 become int32. Version 1 and 2 headers, C order only.
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tenfold::testing {

Tensor read_npy(const std::string& path);
/// Values of a .npy file as doubles (any supported dtype), for float64 fixtures.
std::vector<double> read_npy_doubles(const std::string& path, Shape* shape = nullptr);

}  // namespace tenfold::testing
