#include "io/hdf5.h"

#include <hdf5.h>

#include <filesystem>
#include <utility>

#include "core/error.h"
#include "kernels/bfloat16.h"

namespace tenfold::io {

namespace {

// Larger than any Keras config or weight; a file declaring more is not trusted.
constexpr uint64_t max_string_bytes = uint64_t(1) << 26;
constexpr uint64_t max_dataset_elements = uint64_t(1) << 31;
constexpr size_t max_string_array = size_t(1) << 20;

/// HDF5 prints its own error stack by default; Tenfold reports errors itself.
void silence_hdf5() {
  static bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
}

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw Error(ErrorCode::data_loss, where + ": " + what);
}

/// An id of any HDF5 kind (type, space, attribute, property list), closed by `close`.
struct Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  Handle(hid_t handle, herr_t (*closer)(hid_t)) : id(handle), close(closer) {}
  Handle(Handle&& other) noexcept : id(std::exchange(other.id, -1)), close(other.close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id >= 0) close(id);
  }
};

/// A string type: Tenfold writes UTF-8; reading uses the file's own character set (h5py writes
/// ASCII or UTF-8, and HDF5 does not convert between them).
Handle string_type(bool variable, size_t size, H5T_cset_t cset = H5T_CSET_UTF8) {
  Handle type{H5Tcopy(H5T_C_S1), H5Tclose};
  H5Tset_size(type.id, variable ? H5T_VARIABLE : size);
  H5Tset_cset(type.id, cset);
  return type;
}

}  // namespace

Hdf5Object::~Hdf5Object() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    default: H5Oclose(id_); break;
  }
}

void Hdf5Object::close() {
  hid_t id = std::exchange(id_, -1);
  if (H5Fclose(id) < 0) throw Error(ErrorCode::unavailable, "cannot finish writing " + path_ + " (is the disk full?)");
}

Hdf5Object::Hdf5Object(Hdf5Object&& other) noexcept
    : id_(std::exchange(other.id_, -1)), path_(std::move(other.path_)) {}

Hdf5Object& Hdf5Object::operator=(Hdf5Object&& other) noexcept {
  std::swap(id_, other.id_);
  std::swap(path_, other.path_);
  return *this;
}

Hdf5Object create_hdf5_file(const std::string& path) {
  silence_hdf5();
  hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) throw Error(ErrorCode::unavailable, "cannot create " + path + " (check the directory exists and is writable)");
  return Hdf5Object(id, path + ":");
}

Hdf5Object open_hdf5_file(const std::string& path) {
  silence_hdf5();
  if (!std::filesystem::is_regular_file(path)) throw Error(ErrorCode::not_found, "model file " + path + " does not exist");
  if (H5Fis_hdf5(path.c_str()) <= 0) fail(path, "not an HDF5 file (or a damaged one)");
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) fail(path, "cannot be opened as HDF5: the file is damaged or truncated");
  return Hdf5Object(id, path + ":");
}

Hdf5Object Hdf5Object::create_group(const std::string& name) const {
  hid_t id = H5Gcreate2(id_, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) throw Error(ErrorCode::unavailable, "cannot create group " + path_ + "/" + name);
  return Hdf5Object(id, path_ + "/" + name);
}

void Hdf5Object::write_string_attribute(const std::string& name, const std::string& value) const {
  Handle type = string_type(true, 0);
  Handle space{H5Screate(H5S_SCALAR), H5Sclose};
  Handle attribute{H5Acreate2(id_, name.c_str(), type.id, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  const char* text = value.c_str();
  if (attribute.id < 0 || H5Awrite(attribute.id, type.id, &text) < 0) {
    throw Error(ErrorCode::unavailable, "cannot write attribute " + path_ + "@" + name);
  }
}

void Hdf5Object::write_string_array_attribute(const std::string& name,
                                              const std::vector<std::string>& values) const {
  hsize_t count = values.size();
  Handle space{H5Screate_simple(1, &count, nullptr), H5Sclose};
  // Keras writes an empty list as an empty float64 array; an empty string array is the same.
  Handle type = values.empty() ? Handle{H5Tcopy(H5T_IEEE_F64LE), H5Tclose} : string_type(true, 0);
  Handle attribute{H5Acreate2(id_, name.c_str(), type.id, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  std::vector<const char*> texts;
  for (const std::string& value : values) texts.push_back(value.c_str());
  double none = 0;
  const void* data = values.empty() ? static_cast<const void*>(&none) : texts.data();
  if (attribute.id < 0 || H5Awrite(attribute.id, type.id, data) < 0) {
    throw Error(ErrorCode::unavailable, "cannot write attribute " + path_ + "@" + name);
  }
}

void Hdf5Object::write_dataset(const std::string& name, const Shape& shape, const float* values,
                               DType dtype) const {
  std::vector<hsize_t> dims(shape.dims().begin(), shape.dims().end());
  Handle space{dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(int(dims.size()), dims.data(), nullptr),
               H5Sclose};
  const bool bfloat16 = dtype == DType::bfloat16;
  Handle type = bfloat16 ? Handle{H5Tcreate(H5T_OPAQUE, 2), H5Tclose} : Handle{H5Tcopy(H5T_IEEE_F32LE), H5Tclose};
  Hdf5Object dataset(H5Dcreate2(id_, name.c_str(), type.id, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     path_ + "/" + name);
  std::vector<uint16_t> bits;
  if (bfloat16) {
    bits.resize(size_t(shape.num_elements()));
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = kernels::bfloat16_bits(values[i]);
  }
  const bool written = dataset.id() >= 0 &&
                       (bfloat16 ? H5Dwrite(dataset.id(), type.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, bits.data())
                                 : H5Dwrite(dataset.id(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values)) >= 0;
  if (!written) throw Error(ErrorCode::unavailable, "cannot write dataset " + path_ + "/" + name);
  if (bfloat16) dataset.write_string_attribute("dtype", "bfloat16");
}

void Hdf5Object::write_int64_scalar(const std::string& name, int64_t value) const {
  Handle space{H5Screate(H5S_SCALAR), H5Sclose};
  Hdf5Object dataset(H5Dcreate2(id_, name.c_str(), H5T_STD_I64LE, space.id, H5P_DEFAULT,
                                H5P_DEFAULT, H5P_DEFAULT),
                     path_ + "/" + name);
  if (dataset.id() < 0 || H5Dwrite(dataset.id(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) < 0) {
    throw Error(ErrorCode::unavailable, "cannot write dataset " + path_ + "/" + name);
  }
}

bool Hdf5Object::has_attribute(const std::string& name) const {
  return H5Aexists(id_, name.c_str()) > 0;
}

Hdf5Object Hdf5Object::open_group(const std::string& name) const {
  size_t slash = name.find('/');
  if (slash != std::string::npos) return open_group(name.substr(0, slash)).open_group(name.substr(slash + 1));
  std::string where = path_ + "/" + name;
  if (name.empty() || name == "." || H5Lexists(id_, name.c_str(), H5P_DEFAULT) <= 0) fail(where, "missing group");
  H5L_info_t link;
  if (H5Lget_info(id_, name.c_str(), &link, H5P_DEFAULT) < 0 || link.type != H5L_TYPE_HARD) {
    fail(where, "is a soft or external link; Tenfold reads only the file's own objects");
  }
  hid_t id = H5Gopen2(id_, name.c_str(), H5P_DEFAULT);
  if (id < 0) fail(where, "is not a group");
  return Hdf5Object(id, where);
}

std::string Hdf5Object::read_string_attribute(const std::string& name) const {
  std::string where = path_ + "@" + name;
  if (!has_attribute(name)) fail(where, "missing attribute");
  Handle attribute{H5Aopen(id_, name.c_str(), H5P_DEFAULT), H5Aclose};
  Handle type{H5Aget_type(attribute.id), H5Tclose};
  Handle space{H5Aget_space(attribute.id), H5Sclose};
  if (H5Tget_class(type.id) != H5T_STRING || H5Sget_simple_extent_npoints(space.id) != 1) {
    fail(where, "is not a string");
  }
  if (H5Tis_variable_str(type.id) > 0) {
    Handle memory = string_type(true, 0, H5Tget_cset(type.id));
    char* text = nullptr;
    if (H5Aread(attribute.id, memory.id, &text) < 0 || text == nullptr) fail(where, "unreadable");
    std::string value(text);
    H5free_memory(text);
    return value;
  }
  size_t size = H5Tget_size(type.id);
  if (size == 0 || size > max_string_bytes) fail(where, "declares a string of " + std::to_string(size) + " bytes");
  Handle memory = string_type(false, size, H5Tget_cset(type.id));
  std::string value(size, '\0');
  if (H5Aread(attribute.id, memory.id, value.data()) < 0) fail(where, "unreadable");
  return value.substr(0, value.find('\0'));
}

std::vector<std::string> Hdf5Object::read_string_array_attribute(const std::string& name) const {
  std::string where = path_ + "@" + name;
  if (!has_attribute(name)) fail(where, "missing attribute");
  Handle attribute{H5Aopen(id_, name.c_str(), H5P_DEFAULT), H5Aclose};
  Handle type{H5Aget_type(attribute.id), H5Tclose};
  Handle space{H5Aget_space(attribute.id), H5Sclose};
  hssize_t count = H5Sget_simple_extent_npoints(space.id);
  if (count == 0) return {};
  if (H5Tget_class(type.id) != H5T_STRING || H5Sget_simple_extent_ndims(space.id) != 1 || count < 0 ||
      size_t(count) > max_string_array) {
    fail(where, "is not a list of strings");
  }
  std::vector<std::string> values;
  if (H5Tis_variable_str(type.id) > 0) {
    Handle memory = string_type(true, 0, H5Tget_cset(type.id));
    std::vector<char*> texts(size_t(count), nullptr);
    if (H5Aread(attribute.id, memory.id, texts.data()) < 0) fail(where, "unreadable");
    for (char* text : texts) values.emplace_back(text ? text : "");
    H5Dvlen_reclaim(memory.id, space.id, H5P_DEFAULT, texts.data());
    return values;
  }
  size_t size = H5Tget_size(type.id);
  if (size == 0 || size * size_t(count) > max_string_bytes) fail(where, "declares too large strings");
  Handle memory = string_type(false, size, H5Tget_cset(type.id));
  std::string buffer(size * size_t(count), '\0');
  if (H5Aread(attribute.id, memory.id, buffer.data()) < 0) fail(where, "unreadable");
  for (hssize_t i = 0; i < count; ++i) {
    std::string text = buffer.substr(size_t(i) * size, size);
    values.push_back(text.substr(0, text.find('\0')));
  }
  return values;
}

Hdf5Object Hdf5Object::open_dataset(const std::string& name) const {
  size_t slash = name.rfind('/');
  if (slash != std::string::npos) return open_group(name.substr(0, slash)).open_dataset(name.substr(slash + 1));
  std::string where = path_ + "/" + name;
  if (name.empty() || H5Lexists(id_, name.c_str(), H5P_DEFAULT) <= 0) fail(where, "missing dataset");
  H5L_info_t link;
  if (H5Lget_info(id_, name.c_str(), &link, H5P_DEFAULT) < 0 || link.type != H5L_TYPE_HARD) {
    fail(where, "is a soft or external link; Tenfold reads only the file's own objects");
  }
  hid_t id = H5Dopen2(id_, name.c_str(), H5P_DEFAULT);
  if (id < 0) fail(where, "is not a dataset");
  Hdf5Object dataset(id, where);
  Handle plist{H5Dget_create_plist(id), H5Pclose};
  if (H5Pget_layout(plist.id) == H5D_VIRTUAL) fail(where, "is a virtual dataset (data in other files)");
  if (H5Pget_external_count(plist.id) != 0) fail(where, "keeps its data in external files");
  return dataset;
}

Tensor Hdf5Object::read_dataset(const std::string& name) const {
  std::string where = path_ + "/" + name;
  Hdf5Object dataset = open_dataset(name);
  Handle type{H5Dget_type(dataset.id()), H5Tclose};
  Handle space{H5Dget_space(dataset.id()), H5Sclose};
  // h5py stores bfloat16 (ml_dtypes') as 2-byte opaque values, as Keras writes them.
  const bool bfloat16 = H5Tget_class(type.id) == H5T_OPAQUE && H5Tget_size(type.id) == 2;
  if (H5Tget_class(type.id) != H5T_FLOAT && !bfloat16) fail(where, "is not floating point");
  int rank = H5Sget_simple_extent_ndims(space.id);
  if (rank < 0 || rank > 8) fail(where, "has an invalid number of dimensions");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
  std::vector<int64_t> shape;
  uint64_t elements = 1;
  for (hsize_t dim : dims) {
    if (dim > max_dataset_elements) fail(where, "declares a dimension of " + std::to_string(dim));
    shape.push_back(int64_t(dim));
    elements *= dim;
    if (elements > max_dataset_elements) fail(where, "declares too many elements");
  }
  // Keras stores weights uncompressed: a dataset cannot hold more than its file.
  hsize_t file_size = 0;
  Handle file{H5Iget_file_id(dataset.id()), H5Fclose};
  if (H5Fget_filesize(file.id, &file_size) < 0 || elements * (bfloat16 ? 2 : sizeof(float)) > file_size) {
    fail(where, "declares " + std::to_string(elements) + " values, more than the file holds");
  }
  Tensor values{Shape(shape)};
  std::vector<uint16_t> bits(bfloat16 ? elements : 0);
  const bool read = bfloat16 ? H5Dread(dataset.id(), type.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, bits.data()) >= 0
                             : H5Dread(dataset.id(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.raw_data()) >= 0;
  if (!read) fail(where, "cannot be read: the file is damaged or truncated");
  for (size_t i = 0; i < bits.size(); ++i) values.data<float>()[i] = kernels::float_from_bits(bits[i]);
  return values;
}

int64_t Hdf5Object::read_int64_scalar(const std::string& name) const {
  std::string where = path_ + "/" + name;
  Hdf5Object dataset = open_dataset(name);
  Handle type{H5Dget_type(dataset.id()), H5Tclose};
  Handle space{H5Dget_space(dataset.id()), H5Sclose};
  if (H5Tget_class(type.id) != H5T_INTEGER || H5Sget_simple_extent_npoints(space.id) != 1) {
    fail(where, "is not an integer scalar");
  }
  int64_t value = 0;
  if (H5Dread(dataset.id(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) < 0) {
    fail(where, "cannot be read: the file is damaged or truncated");
  }
  return value;
}

}  // namespace tenfold::io
