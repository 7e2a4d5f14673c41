// Dataset::cache(path): the first complete pass is written to a file, later passes (and later
// runs) read it instead of the input. The file is written beside its final name and renamed
// into place only when the pass completes, so an interrupted pass leaves no partial cache.
//
// Format: "TFLDCACHE1", then per element: u32 components; per component: u8 dtype, u8 rank,
// i64 dims[rank], then the data. Read as untrusted: every size is checked against what is
// left of the file before anything is allocated.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "data/operator.h"

namespace tenfold::data {

namespace {

constexpr char magic[] = "TFLDCACHE1";
constexpr size_t magic_size = sizeof(magic) - 1;
constexpr int max_rank = 8;

template <typename T>
void write_value(std::ofstream& out, T value) {
  out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

class CacheWriter : public Iterator {
 public:
  CacheWriter(std::shared_ptr<Iterator> source, std::string path)
      : source_(std::move(source)),
        path_(std::move(path)),
        temporary_(path_ + ".tmp-" + std::to_string(getpid())),
        out_(temporary_, std::ios::binary) {
    if (!out_) {
      throw Error(ErrorCode::unavailable, "cannot write the dataset cache " + temporary_ +
                                              "; check that its directory exists and is writable");
    }
    out_.write(magic, magic_size);
  }
  ~CacheWriter() override {
    if (!finished_) {
      out_.close();
      std::remove(temporary_.c_str());  // an unfinished pass leaves no cache
    }
  }

  std::optional<Element> next() override {
    std::optional<Element> element = source_->next();
    if (!element) {
      out_.close();
      if (!out_ || std::rename(temporary_.c_str(), path_.c_str()) != 0) {
        throw Error(ErrorCode::unavailable, "could not complete the dataset cache " + path_);
      }
      finished_ = true;
      return std::nullopt;
    }
    write_value<uint32_t>(out_, uint32_t(element->size()));
    for (const Tensor& component : *element) {
      write_value<uint8_t>(out_, uint8_t(component.dtype()));
      write_value<uint8_t>(out_, uint8_t(component.shape().rank()));
      for (int64_t dim : component.shape().dims()) write_value<int64_t>(out_, dim);
      out_.write(static_cast<const char*>(component.raw_data()), std::streamsize(component.num_bytes()));
    }
    return element;
  }

 private:
  std::shared_ptr<Iterator> source_;
  std::string path_, temporary_;
  std::ofstream out_;
  bool finished_ = false;
};

class CacheReader : public Iterator {
 public:
  explicit CacheReader(const std::string& path)
      : path_(path), in_(path, std::ios::binary), left_(std::filesystem::file_size(path)) {
    char header[magic_size];
    read(header, magic_size, "header");
    if (std::string(header, magic_size) != magic) fail("it is not a Tenfold dataset cache");
  }

  std::optional<Element> next() override {
    if (left_ == 0) return std::nullopt;
    uint32_t components = value<uint32_t>();
    Element element;
    for (uint32_t c = 0; c < components; ++c) {
      uint8_t dtype = value<uint8_t>(), rank = value<uint8_t>();
      if (dtype > uint8_t(DType::uint8) || rank > max_rank) fail("a component has a bad dtype or rank");
      std::vector<int64_t> dims(rank);
      uint64_t bytes = dtype_size(DType(dtype));
      for (int64_t& dim : dims) {
        dim = value<int64_t>();
        if (dim < 0 || (dim > 0 && bytes > left_ / uint64_t(dim))) fail("a component is larger than the file");
        bytes *= uint64_t(dim);
      }
      Tensor tensor = Tensor::uninitialized(Shape(dims), DType(dtype));
      read(tensor.raw_data(), bytes, "data");
      element.push_back(std::move(tensor));
    }
    return element;
  }

 private:
  template <typename T>
  T value() {
    T result;
    read(&result, sizeof(T), "element header");
    return result;
  }
  void read(void* destination, uint64_t bytes, const char* what) {
    if (bytes > left_) fail(std::string("its ") + what + " is cut short");
    in_.read(static_cast<char*>(destination), std::streamsize(bytes));
    if (!in_) fail("it cannot be read");
    left_ -= bytes;
  }
  [[noreturn]] void fail(const std::string& why) {
    throw Error(ErrorCode::data_loss, "dataset cache " + path_ + " is corrupt: " + why +
                                          "; delete it and it will be rebuilt");
  }

  std::string path_;
  std::ifstream in_;
  uint64_t left_;
};

}  // namespace

Dataset Dataset::cache(const std::string& path) const {
  check_argument(!path.empty(), "cache(path) needs a file name; cache() caches in memory");
  auto iterate = [path](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    if (std::filesystem::is_regular_file(path)) return std::make_unique<CacheReader>(path);
    return std::make_unique<CacheWriter>(shared_iterator(input, epoch), path);
  };
  return Dataset(std::make_shared<Unary>(impl_, iterate, cardinality(), element_spec()));
}

}  // namespace tenfold::data
