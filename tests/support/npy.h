#pragma once
// Reads .npy fixtures (written by tools/*.py) through datasets/numpy.h: floating-point dtypes
// become float32, integer and bool dtypes int32.
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tenfold::testing {

Tensor read_npy(const std::string& path);
/// Values of a .npy file as doubles (any supported dtype), for float64 fixtures.
std::vector<double> read_npy_doubles(const std::string& path, Shape* shape = nullptr);

}  // namespace tenfold::testing
