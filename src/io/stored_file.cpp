#include "io/stored_file.h"

#include <hdf5.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/hdf5.h"

namespace tenfold::io {

namespace {

using nlohmann::json;

constexpr int max_group_depth = 32;
constexpr size_t max_objects = 100000;
constexpr uint64_t max_message_bytes = uint64_t(1) << 34;
// The reader gets 10 s, and 1 s more per 20 MB of file: a healthy model file reads at hundreds
// of MB/s, while damaged ones can send libhdf5 spinning (a fuzzed global heap did, for minutes).
constexpr int64_t reader_base_seconds = 10;
constexpr int64_t reader_bytes_per_second = 20'000'000;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw Error(ErrorCode::data_loss, where + ": " + what);
}

// ---- In the child: walk the file with libhdf5 and encode what it holds. ----

herr_t collect_attribute(hid_t, const char* name, const H5A_info_t*, void* names) {
  static_cast<std::vector<std::string>*>(names)->push_back(name);
  return 0;
}

herr_t collect_link(hid_t, const char* name, const H5L_info_t* info, void* links) {
  static_cast<std::vector<std::pair<std::string, H5L_type_t>>*>(links)->emplace_back(name, info->type);
  return 0;
}

struct Encoder {
  std::vector<float> blob;
  size_t objects = 0;

  json group(const Hdf5Object& group, int depth) {
    if (depth > max_group_depth) fail(group.path(), "nests groups deeper than " + std::to_string(max_group_depth));
    json out = {{"attributes", json::object()}, {"groups", json::object()}, {"datasets", json::object()},
                {"refused", json::object()}};
    std::vector<std::string> attributes;
    H5Aiterate2(group.id(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attribute, &attributes);
    for (const std::string& name : attributes) {
      count(group);
      try {
        hid_t attribute = H5Aopen(group.id(), name.c_str(), H5P_DEFAULT);
        hid_t space = H5Aget_space(attribute);
        bool scalar = H5Sget_simple_extent_ndims(space) == 0;
        H5Sclose(space);
        H5Aclose(attribute);
        out["attributes"][name] = scalar ? json{{"string", group.read_string_attribute(name)}}
                                         : json{{"strings", group.read_string_array_attribute(name)}};
      } catch (const Error& error) {
        out["attributes"][name] = {{"refused", error.what()}};
      }
    }
    std::vector<std::pair<std::string, H5L_type_t>> links;
    H5Literate(group.id(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_link, &links);
    for (const auto& [name, type] : links) {
      count(group);
      if (type != H5L_TYPE_HARD) {
        out["refused"][name] = group.path() + "/" + name + ": is a soft or external link; Tenfold reads only the file's own objects";
        continue;
      }
      H5O_info_t info;
      if (H5Oget_info_by_name2(group.id(), name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
        out["refused"][name] = group.path() + "/" + name + ": cannot be read: the file is damaged";
      } else if (info.type == H5O_TYPE_GROUP) {
        out["groups"][name] = this->group(group.open_group(name), depth + 1);
      } else if (info.type == H5O_TYPE_DATASET) {
        out["datasets"][name] = dataset(group, name);
      }
    }
    return out;
  }

  json dataset(const Hdf5Object& group, const std::string& name) {
    try {
      hid_t id = H5Dopen2(group.id(), name.c_str(), H5P_DEFAULT);
      hid_t type = H5Dget_type(id);
      bool integer = H5Tget_class(type) == H5T_INTEGER;
      H5Tclose(type);
      H5Dclose(id);
      if (integer) return {{"integer", group.read_int64_scalar(name)}};
      Tensor values = group.read_dataset(name);
      json entry = {{"shape", values.shape().dims()}, {"offset", blob.size()}, {"count", values.num_elements()}};
      blob.insert(blob.end(), values.data<float>(), values.data<float>() + values.num_elements());
      return entry;
    } catch (const Error& error) {
      return {{"refused", error.what()}};
    }
  }

  void count(const Hdf5Object& group) {
    if (++objects > max_objects) fail(group.path(), "holds more than " + std::to_string(max_objects) + " objects");
  }
};

void write_all(int fd, const void* data, size_t bytes) {
  const char* at = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t written = write(fd, at, bytes);
    if (written <= 0) _exit(3);
    at += written;
    bytes -= size_t(written);
  }
}

/// The child's whole life: read, encode, write to `fd`, exit without running any handler of
/// the parent's (MPI, threads).
[[noreturn]] void run_reader(const std::string& path, int fd) {
  try {
    Hdf5Object file = open_hdf5_file(path);
    Encoder encoder;
    std::string tree = encoder.group(file, 0).dump();
    uint64_t sizes[2] = {tree.size(), encoder.blob.size()};
    write_all(fd, "T", 1);
    write_all(fd, &sizes[0], sizeof sizes[0]);
    write_all(fd, tree.data(), tree.size());
    write_all(fd, &sizes[1], sizeof sizes[1]);
    write_all(fd, encoder.blob.data(), encoder.blob.size() * sizeof(float));
  } catch (const Error& error) {
    uint32_t code = uint32_t(error.code());
    std::string message = error.what();
    write_all(fd, "E", 1);
    write_all(fd, &code, sizeof code);
    write_all(fd, message.data(), message.size());
  } catch (...) {
    _exit(4);
  }
  _exit(0);
}

// ---- In this process: read the child's message and check every piece of it. ----

std::string receive(const std::string& path, int fd, pid_t child) {
  std::error_code error;
  const uintmax_t file_bytes = std::filesystem::file_size(path, error);
  const int64_t timeout_seconds = reader_base_seconds + (error ? 0 : int64_t(file_bytes) / reader_bytes_per_second);
  std::string message;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  char buffer[1 << 16];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd ready{fd, POLLIN, 0};
    int polled = left.count() <= 0 ? 0 : poll(&ready, 1, int(left.count()));
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) {
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
      fail(path, "reading it took over " + std::to_string(timeout_seconds) + " s: the file is damaged or hostile");
    }
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    message.append(buffer, size_t(got));
    if (message.size() > max_message_bytes) {
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
      fail(path, "holds more data than Tenfold reads from a model file");
    }
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) fail(path, "the HDF5 reader was lost");
  }
  if (WIFSIGNALED(status)) {
    fail(path, std::string("the HDF5 reader crashed on it (") + strsignal(WTERMSIG(status)) +
                   "): the file is damaged or hostile");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail(path, "the HDF5 reader failed on it");
  return message;
}

}  // namespace

struct StoredFileCodec {
  static void decode(const json& tree, const std::vector<float>& blob, StoredGroup& group) {
    for (const auto& [name, value] : tree.at("attributes").items()) {
      if (value.contains("string")) {
        group.strings_[name] = value.at("string").get<std::string>();
      } else if (value.contains("strings")) {
        group.string_lists_[name] = value.at("strings").get<std::vector<std::string>>();
      } else {
        group.attribute_refusals_[name] = value.at("refused").get<std::string>();
      }
    }
    for (const auto& [name, value] : tree.at("refused").items()) group.child_refusals_[name] = value.get<std::string>();
    for (const auto& [name, value] : tree.at("groups").items()) {
      auto child = std::make_unique<StoredGroup>();
      child->path_ = group.path_ + "/" + name;
      decode(value, blob, *child);
      group.groups_[name] = std::move(child);
    }
    for (const auto& [name, value] : tree.at("datasets").items()) {
      StoredGroup::Dataset& dataset = group.datasets_[name];
      if (value.contains("refused")) {
        dataset.refusal = value.at("refused").get<std::string>();
      } else if (value.contains("integer")) {
        dataset.is_integer = true;
        dataset.integer = value.at("integer").get<int64_t>();
      } else {
        auto dims = value.at("shape").get<std::vector<int64_t>>();
        uint64_t offset = value.at("offset").get<uint64_t>(), count = value.at("count").get<uint64_t>();
        uint64_t elements = 1;
        for (int64_t dim : dims) {
          if (dim < 0 || dims.size() > 8) fail(group.path_ + "/" + name, "has an invalid shape");
          elements *= uint64_t(dim);
        }
        if (elements != count || offset > blob.size() || count > blob.size() - offset) {
          fail(group.path_ + "/" + name, "was received damaged");
        }
        dataset.floats = Tensor{Shape(dims)};
        std::copy(blob.begin() + ptrdiff_t(offset), blob.begin() + ptrdiff_t(offset + count),
                  dataset.floats.data<float>());
      }
    }
  }
};

StoredGroup read_stored_file(const std::string& path) {
  if (access(path.c_str(), R_OK) != 0) throw Error(ErrorCode::not_found, "model file " + path + " does not exist");
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw Error(ErrorCode::unavailable, "cannot start the model file reader (pipe)");
  pid_t child = fork();
  if (child < 0) throw Error(ErrorCode::unavailable, "cannot start the model file reader (fork)");
  if (child == 0) {
    close(pipe_fds[0]);
    run_reader(path, pipe_fds[1]);
  }
  close(pipe_fds[1]);
  std::string message;
  try {
    message = receive(path, pipe_fds[0], child);
  } catch (...) {
    close(pipe_fds[0]);
    throw;
  }
  close(pipe_fds[0]);

  auto take = [&](size_t& at, size_t bytes) {
    if (bytes > message.size() - at) fail(path, "the reader's answer was cut short");
    size_t start = at;
    at += bytes;
    return start;
  };
  size_t at = 0;
  char kind = message.empty() ? '?' : message[take(at, 1)];
  if (kind == 'E') {
    uint32_t code = 0;
    std::memcpy(&code, message.data() + take(at, sizeof code), sizeof code);
    if (code > uint32_t(ErrorCode::internal)) code = uint32_t(ErrorCode::data_loss);
    throw Error(ErrorCode(code), message.substr(at));
  }
  if (kind != 'T') fail(path, "the HDF5 reader gave no answer");
  uint64_t tree_size = 0, floats = 0;
  std::memcpy(&tree_size, message.data() + take(at, 8), 8);
  std::string tree_text = message.substr(take(at, size_t(tree_size)), size_t(tree_size));
  std::memcpy(&floats, message.data() + take(at, 8), 8);
  if (floats > (message.size() - at) / sizeof(float)) fail(path, "the reader's answer was cut short");
  std::vector<float> blob(static_cast<size_t>(floats));
  if (floats > 0) {  // an empty blob's data() is null, which memcpy must not get (UBSan, a fuzzed file)
    std::memcpy(blob.data(), message.data() + take(at, size_t(floats) * sizeof(float)), size_t(floats) * sizeof(float));
  }

  StoredGroup root;
  root.path_ = path + ":";
  try {
    json tree = json::parse(tree_text, [](int depth, json::parse_event_t, json&) {
      if (depth > 4 * max_group_depth + 8) throw Error(ErrorCode::data_loss, "the file nests too deeply");
      return true;
    });
    StoredFileCodec::decode(tree, blob, root);
  } catch (const json::exception& error) {
    fail(path, std::string("the reader's answer is malformed: ") + error.what());
  }
  return root;
}

bool StoredGroup::has_attribute(const std::string& name) const {
  return strings_.count(name) || string_lists_.count(name) || attribute_refusals_.count(name);
}

bool StoredGroup::has_child(const std::string& name) const {
  return groups_.count(name) || datasets_.count(name) || child_refusals_.count(name);
}

const StoredGroup& StoredGroup::open_group(const std::string& name) const {
  size_t slash = name.find('/');
  if (slash != std::string::npos) return open_group(name.substr(0, slash)).open_group(name.substr(slash + 1));
  if (auto refused = child_refusals_.find(name); refused != child_refusals_.end()) throw Error(ErrorCode::data_loss, refused->second);
  auto found = groups_.find(name);
  if (found == groups_.end()) fail(path_ + "/" + name, datasets_.count(name) ? "is not a group" : "missing group");
  return *found->second;
}

std::string StoredGroup::read_string_attribute(const std::string& name) const {
  if (auto refused = attribute_refusals_.find(name); refused != attribute_refusals_.end()) {
    throw Error(ErrorCode::data_loss, refused->second);
  }
  auto found = strings_.find(name);
  if (found == strings_.end()) fail(path_ + "@" + name, string_lists_.count(name) ? "is not a string" : "missing attribute");
  return found->second;
}

std::vector<std::string> StoredGroup::read_string_array_attribute(const std::string& name) const {
  if (auto refused = attribute_refusals_.find(name); refused != attribute_refusals_.end()) {
    throw Error(ErrorCode::data_loss, refused->second);
  }
  auto found = string_lists_.find(name);
  if (found == string_lists_.end()) fail(path_ + "@" + name, strings_.count(name) ? "is not a list of strings" : "missing attribute");
  return found->second;
}

const StoredGroup::Dataset& StoredGroup::dataset(const std::string& name) const {
  size_t slash = name.rfind('/');
  if (slash != std::string::npos) return open_group(name.substr(0, slash)).dataset(name.substr(slash + 1));
  if (auto refused = child_refusals_.find(name); refused != child_refusals_.end()) throw Error(ErrorCode::data_loss, refused->second);
  auto found = datasets_.find(name);
  if (found == datasets_.end()) fail(path_ + "/" + name, groups_.count(name) ? "is not a dataset" : "missing dataset");
  if (!found->second.refusal.empty()) throw Error(ErrorCode::data_loss, found->second.refusal);
  return found->second;
}

Tensor StoredGroup::read_dataset(const std::string& name, const Shape& expected) const {
  const Dataset& stored = dataset(name);
  std::string where = path_ + "/" + name;
  if (stored.is_integer) fail(where, "is not floating point");
  if (stored.floats.shape() != expected) {
    fail(where, "has shape " + stored.floats.shape().to_string() + " but the model config needs " + expected.to_string());
  }
  return stored.floats.clone();
}

int64_t StoredGroup::read_int64_scalar(const std::string& name) const {
  const Dataset& stored = dataset(name);
  if (!stored.is_integer) fail(path_ + "/" + name, "is not an integer scalar");
  return stored.integer;
}

}  // namespace tenfold::io
