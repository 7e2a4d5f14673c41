#include "datasets/numpy.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>

#include "core/error.h"
#include "io/zip_archive.h"

namespace tenfold::datasets {

namespace {

// Larger than any array a training set holds here; a header asking for more is not trusted.
constexpr uint64_t max_array_bytes = uint64_t(1) << 36;
constexpr int max_dimensions = 16;

/// The size in bytes of one value of a dtype Tenfold reads, or 0 for any other dtype.
size_t item_size(const std::string& dtype) {
  static const std::map<std::string, size_t> sizes = {
      {"<f4", 4}, {"<f8", 8}, {"|u1", 1}, {"|b1", 1}, {"|i1", 1}, {"<i2", 2},
      {"<u2", 2}, {"<i4", 4}, {"<u4", 4}, {"<i8", 8}, {"<u8", 8}};
  auto found = sizes.find(dtype);
  return found == sizes.end() ? 0 : found->second;
}

template <typename T>
T load(const char* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

/// The value at `at` of `dtype` as a double.
double value_at(const std::string& dtype, const char* at) {
  if (dtype == "<f4") return load<float>(at);
  if (dtype == "<f8") return load<double>(at);
  if (dtype == "|u1" || dtype == "|b1") return load<uint8_t>(at);
  if (dtype == "|i1") return load<int8_t>(at);
  if (dtype == "<i2") return load<int16_t>(at);
  if (dtype == "<u2") return load<uint16_t>(at);
  if (dtype == "<i4") return load<int32_t>(at);
  if (dtype == "<u4") return load<uint32_t>(at);
  if (dtype == "<i8") return double(load<int64_t>(at));
  return double(load<uint64_t>(at));
}

/// The byte offset in the file's payload of each value in C order (Fortran order transposed).
std::vector<size_t> c_order_offsets(const NpyArray& array) {
  const size_t item = item_size(array.dtype);
  const int64_t count = array.shape.num_elements();
  std::vector<size_t> offsets(static_cast<size_t>(count));
  if (!array.fortran_order) {
    for (int64_t i = 0; i < count; ++i) offsets[size_t(i)] = size_t(i) * item;
    return offsets;
  }
  const int rank = array.shape.rank();
  std::vector<int64_t> index(size_t(rank), 0), stride(size_t(rank), 1);
  for (int d = 1; d < rank; ++d) stride[size_t(d)] = stride[size_t(d - 1)] * array.shape[d - 1];
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) offset += index[size_t(d)] * stride[size_t(d)];
    offsets[size_t(i)] = size_t(offset) * item;
    for (int d = rank - 1; d >= 0; --d) {  // the next index in C order
      if (++index[size_t(d)] < array.shape[d]) break;
      index[size_t(d)] = 0;
    }
  }
  return offsets;
}

std::string read_bytes(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) {
    throw Error(ErrorCode::not_found, path + " does not exist");
  }
  std::ifstream file(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (!file.eof() && file.fail()) throw Error(ErrorCode::unavailable, "cannot read " + path);
  return bytes;
}

}  // namespace

NpyArray parse_npy(std::string bytes, const std::string& name) {
  auto damaged = [&](const std::string& what) {
    return Error(ErrorCode::data_loss, name + " is not a valid .npy file: " + what);
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw damaged("no NumPy magic");
  const int major = uint8_t(bytes[6]);
  if (major < 1 || major > 3) throw damaged("format version " + std::to_string(major));
  size_t header_start = major == 1 ? 10 : 12;
  if (bytes.size() < header_start) throw damaged("the header is cut short");
  size_t header_length = size_t(uint8_t(bytes[8])) | size_t(uint8_t(bytes[9])) << 8;
  if (major > 1) header_length |= size_t(uint8_t(bytes[10])) << 16 | size_t(uint8_t(bytes[11])) << 24;
  if (header_length > bytes.size() - header_start) throw damaged("the header is cut short");
  const std::string header = bytes.substr(header_start, header_length);

  NpyArray array;
  std::smatch match;
  if (!std::regex_search(header, match, std::regex("'descr'\\s*:\\s*'([^']*)'"))) throw damaged("no dtype");
  array.dtype = match[1];
  if (!std::regex_search(header, match, std::regex("'fortran_order'\\s*:\\s*(True|False)"))) {
    throw damaged("no fortran_order");
  }
  array.fortran_order = match[1] == "True";
  if (!std::regex_search(header, match, std::regex("'shape'\\s*:\\s*\\(([0-9, ]*)\\)"))) throw damaged("no shape");
  std::vector<int64_t> dims;
  const std::string shape_text = match[1];
  const std::regex number("[0-9]+");
  for (std::sregex_iterator it(shape_text.begin(), shape_text.end(), number), end; it != end; ++it) {
    if (it->str().size() > 12) throw damaged("a dimension of " + it->str());
    dims.push_back(std::stoll(it->str()));
  }
  if (dims.size() > size_t(max_dimensions)) throw damaged(std::to_string(dims.size()) + " dimensions");

  const size_t item = item_size(array.dtype);
  if (item == 0) {
    throw Error(ErrorCode::invalid_argument,
                name + " holds dtype '" + array.dtype +
                    "', which Tenfold does not read: save it as float32, float64, a little-endian "
                    "integer type or bool (e.g. np.save(path, x.astype(np.float32)))");
  }
  uint64_t total = item;
  for (int64_t dim : dims) {
    if (dim != 0 && total > max_array_bytes / uint64_t(dim)) throw damaged("its shape asks for too many bytes");
    total *= uint64_t(dim);
  }
  const size_t payload = bytes.size() - header_start - header_length;
  if (payload != total) {
    throw damaged("its shape and dtype make " + std::to_string(total) + " bytes but it holds " +
                  std::to_string(payload));
  }
  array.shape = Shape(dims);
  bytes.erase(0, header_start + header_length);
  array.bytes = std::move(bytes);
  return array;
}

Tensor NpyArray::to_tensor(const std::string& name) const {
  const std::vector<size_t> offsets = c_order_offsets(*this);
  const bool floating = dtype[1] == 'f';
  const bool bytes_wide = dtype == "|u1" || dtype == "|b1";
  Tensor tensor(shape, floating ? DType::float32 : bytes_wide ? DType::uint8 : DType::int32);
  for (size_t i = 0; i < offsets.size(); ++i) {
    const char* at = bytes.data() + offsets[i];
    if (floating) {
      tensor.data<float>()[i] = float(value_at(dtype, at));
    } else if (bytes_wide) {
      tensor.data<uint8_t>()[i] = uint8_t(*at);
    } else {
      double value = value_at(dtype, at);
      if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
        // Printed from the double: an int64 near its limits rounds past them there.
        char printed[32];
        std::snprintf(printed, sizeof(printed), "%.0f", value);
        throw Error(ErrorCode::invalid_argument, name + " holds " + printed + " at index " + std::to_string(i) +
                                                 ", outside the int32 range Tenfold keeps labels in");
      }
      tensor.data<int32_t>()[i] = int32_t(value);
    }
  }
  return tensor;
}

std::vector<double> NpyArray::to_doubles() const {
  const std::vector<size_t> offsets = c_order_offsets(*this);
  std::vector<double> values(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) values[i] = value_at(dtype, bytes.data() + offsets[i]);
  return values;
}

Tensor read_npy(const std::string& path) { return parse_npy(read_bytes(path), path).to_tensor(path); }

std::map<std::string, Tensor> read_npz(const std::string& path) {
  io::ZipReader archive(path, "a NumPy .npz file");
  std::map<std::string, Tensor> arrays;
  for (const std::string& entry : archive.entry_names()) {
    if (entry.size() <= 4 || entry.compare(entry.size() - 4, 4, ".npy") != 0) continue;
    const std::string key = entry.substr(0, entry.size() - 4);
    const std::string name = path + ":" + key;
    arrays[key] = parse_npy(archive.read(entry, max_array_bytes), name).to_tensor(name);
  }
  if (arrays.empty()) throw Error(ErrorCode::data_loss, path + " holds no arrays: not a NumPy .npz file");
  return arrays;
}

void write_npy(const std::string& path, const Tensor& tensor) {
  const char* dtype = tensor.dtype() == DType::float32 ? "<f4"
                      : tensor.dtype() == DType::int32 ? "<i4"
                      : tensor.dtype() == DType::uint8 ? "|u1"
                                                       : nullptr;
  check_argument(dtype != nullptr, std::string("write_npy: cannot write a ") + dtype_name(tensor.dtype()) + " tensor");
  std::string shape;
  for (int d = 0; d < tensor.shape().rank(); ++d) shape += (d ? ", " : "") + std::to_string(tensor.shape()[d]);
  if (tensor.shape().rank() == 1) shape += ",";  // Python's one-element tuple: (3,)
  std::string header = std::string("{'descr': '") + dtype + "', 'fortran_order': False, 'shape': (" +
                       shape + "), }";
  // NumPy pads the header with spaces and a newline so the data starts 64-byte aligned.
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char length[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
  out.write(length, 2);
  out << header;
  out.write(static_cast<const char*>(tensor.raw_data()), std::streamsize(tensor.num_bytes()));
  out.close();
  if (!out) throw Error(ErrorCode::unavailable, "could not write " + path + ": check the directory exists and is writable");
}

}  // namespace tenfold::datasets
