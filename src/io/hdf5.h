#pragma once
// A small RAII layer over the HDF5 C API for Keras' model files. Reading treats the file as
// untrusted: only hard links are followed (no soft or external links), datasets with external
// storage or a virtual layout are refused, and every shape is checked against a size limit
// and the caller's expectation before anything is allocated.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tenfold::io {

/// An HDF5 object id (file, group, dataset...) closed when it goes out of scope.
class Hdf5Object {
 public:
  Hdf5Object() = default;
  Hdf5Object(int64_t id, std::string path) : id_(id), path_(std::move(path)) {}
  ~Hdf5Object();
  Hdf5Object(Hdf5Object&& other) noexcept;
  Hdf5Object& operator=(Hdf5Object&& other) noexcept;
  Hdf5Object(const Hdf5Object&) = delete;
  Hdf5Object& operator=(const Hdf5Object&) = delete;

  int64_t id() const { return id_; }
  /// Closes a file now, flushing it; a failed flush (a full disk) is an error here, where the
  /// destructor could only ignore it. Call it when a written file is complete.
  void close();
  /// Where it is, for error messages: "FILE:/model_weights/dense".
  const std::string& path() const { return path_; }

  // Writing (groups and files).
  Hdf5Object create_group(const std::string& name) const;
  void write_string_attribute(const std::string& name, const std::string& value) const;
  void write_string_array_attribute(const std::string& name, const std::vector<std::string>& values) const;
  /// A dataset of `shape` (an empty shape: a scalar): float32, or bfloat16 as Keras 3 writes it
  /// (h5py's 2-byte opaque values, marked with the attribute dtype="bfloat16"), `values`
  /// rounded to nearest even.
  void write_dataset(const std::string& name, const Shape& shape, const float* values,
                     DType dtype = DType::float32) const;
  void write_int64_scalar(const std::string& name, int64_t value) const;

  // Reading.
  bool has_attribute(const std::string& name) const;
  /// A child group, through a hard link only; `name` may be a path "a/b".
  Hdf5Object open_group(const std::string& name) const;
  /// A string attribute, fixed or variable length (h5py writes both kinds).
  std::string read_string_attribute(const std::string& name) const;
  /// A 1-D string array attribute; an empty array may be stored as zero floats (Keras does).
  std::vector<std::string> read_string_array_attribute(const std::string& name) const;
  /// A floating-point dataset (float of any width, or bfloat16 as h5py stores it) in its stored
  /// shape (within a size limit), as float32; the caller checks the shape
  /// (StoredGroup::read_dataset does, against the model config).
  Tensor read_dataset(const std::string& name) const;
  /// A scalar integer dataset.
  int64_t read_int64_scalar(const std::string& name) const;

 private:
  Hdf5Object open_dataset(const std::string& name) const;

  int64_t id_ = -1;
  std::string path_;
};

/// Creates (truncates) an HDF5 file.
Hdf5Object create_hdf5_file(const std::string& path);
/// Opens an HDF5 file read-only; a missing or non-HDF5 file is a clear error.
Hdf5Object open_hdf5_file(const std::string& path);

}  // namespace tenfold::io
