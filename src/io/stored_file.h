#pragma once
// An HDF5 file read in a separate process. libhdf5 itself is not safe on hostile input:
// fuzzing found out-of-bounds reads inside libhdf5 1.10.8 within seconds. So model files are
// parsed by a forked child that walks the whole file (groups, attributes, datasets; hard links
// only) and sends the contents back over a pipe; a crash or hang there is an error here, and
// this process validates everything it receives, trusting nothing from the child.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tenfold::io {

class StoredGroup {
 public:
  /// Where it is, for error messages: "FILE:/model_weights/dense".
  const std::string& path() const { return path_; }
  bool has_attribute(const std::string& name) const;
  bool has_child(const std::string& name) const;
  /// A child group; `name` may be a path "a/b".
  const StoredGroup& open_group(const std::string& name) const;
  std::string read_string_attribute(const std::string& name) const;
  /// A list of strings (an empty list may be stored as zero numbers, as Keras does).
  std::vector<std::string> read_string_array_attribute(const std::string& name) const;
  /// A floating-point dataset of exactly `expected` shape; `name` may be a path.
  Tensor read_dataset(const std::string& name, const Shape& expected) const;
  int64_t read_int64_scalar(const std::string& name) const;

 private:
  friend StoredGroup read_stored_file(const std::string& path);
  friend struct StoredFileCodec;

  struct Dataset {
    Tensor floats;          // a float dataset
    int64_t integer = 0;    // an integer scalar
    bool is_integer = false;
    std::string refusal;    // why it was not read (a link, external storage, ...)
  };
  const Dataset& dataset(const std::string& name) const;

  std::string path_;
  std::map<std::string, std::string> strings_;
  std::map<std::string, std::vector<std::string>> string_lists_;
  std::map<std::string, std::string> attribute_refusals_;
  std::map<std::string, std::unique_ptr<StoredGroup>> groups_;
  std::map<std::string, Dataset> datasets_;
  std::map<std::string, std::string> child_refusals_;  // links not followed, and why
};

/// The whole file, read by a child process. Throws Error (data loss) when the file is not
/// HDF5, is damaged, or makes the reader crash or run past a time limit.
StoredGroup read_stored_file(const std::string& path);

}  // namespace tenfold::io
