#pragma once
// NumPy's .npy and .npz files (np.save, np.savez, np.savez_compressed), read directly: the
// header's dtype, shape and order are checked against the payload before anything is
// allocated from them, so a damaged or hostile file is an error, never a crash.
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tenfold::datasets {

/// One array as the file holds it: NumPy's dtype string ("<f4", "|u1", ...), shape, order
/// and the raw little-endian values.
struct NpyArray {
  std::string dtype;
  Shape shape;
  bool fortran_order = false;
  std::string bytes;

  /// The values in C order as a tensor: float32 for floating-point dtypes, uint8 for uint8
  /// and bool, int32 for other integer dtypes (a value outside int32 is an error naming
  /// `name`).
  Tensor to_tensor(const std::string& name) const;
  /// The values in C order as doubles (any dtype), e.g. for float64 test fixtures.
  std::vector<double> to_doubles() const;
};

/// Parses the bytes of a .npy file; `name` (a path) is only for error messages.
NpyArray parse_npy(std::string bytes, const std::string& name);

/// Reads a .npy file (NpyArray::to_tensor's dtypes).
Tensor read_npy(const std::string& path);

/// Reads every array of a .npz archive, keyed by name without ".npy" (np.load's keys).
std::map<std::string, Tensor> read_npz(const std::string& path);

/// Writes a float32, int32 or uint8 tensor as a .npy file (version 1, C order), crash-safe.
void write_npy(const std::string& path, const Tensor& tensor);

}  // namespace tenfold::datasets
