#include "io/zip_archive.h"

#include <zip.h>

#include <filesystem>

#include "core/error.h"

namespace tenfold::io {

void write_zip(const std::string& path, const std::map<std::string, std::string>& entries) {
  int status = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &status);
  if (archive == nullptr) throw Error(ErrorCode::unavailable, "cannot create " + path);
  for (const auto& [name, bytes] : entries) {
    zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    zip_int64_t index = source ? zip_file_add(archive, name.c_str(), source, ZIP_FL_OVERWRITE) : -1;
    if (index < 0 || zip_set_file_compression(archive, zip_uint64_t(index), ZIP_CM_STORE, 0) != 0) {
      if (source && index < 0) zip_source_free(source);
      std::string message = zip_strerror(archive);
      zip_discard(archive);
      throw Error(ErrorCode::unavailable, "cannot add " + name + " to " + path + ": " + message);
    }
  }
  if (zip_close(archive) != 0) {  // writes everything; the buffers must live until here
    std::string message = zip_strerror(archive);
    zip_discard(archive);
    throw Error(ErrorCode::unavailable, "cannot write " + path + ": " + message);
  }
}

ZipReader::ZipReader(const std::string& path, const std::string& kind) : path_(path), kind_(kind) {
  if (!std::filesystem::is_regular_file(path)) {
    throw Error(ErrorCode::not_found, path + " does not exist (" + kind + " was expected)");
  }
  int status = 0;
  archive_ = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &status);
  if (archive_ == nullptr) {
    throw Error(ErrorCode::data_loss, path + ": not a zip archive (" + kind + "), or a damaged one");
  }
}

ZipReader::~ZipReader() { zip_discard(archive_); }

std::vector<std::string> ZipReader::entry_names() const {
  std::vector<std::string> names;
  zip_int64_t count = zip_get_num_entries(archive_, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* name = zip_get_name(archive_, zip_uint64_t(i), 0);
    if (name) names.emplace_back(name);
  }
  return names;
}

std::string ZipReader::read(const std::string& name, uint64_t max_bytes) const {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat(archive_, name.c_str(), 0, &stat) != 0 || !(stat.valid & ZIP_STAT_SIZE)) {
    throw Error(ErrorCode::data_loss, path_ + " has no " + name + ": not " + kind_);
  }
  if (stat.size > max_bytes) {
    throw Error(ErrorCode::data_loss, path_ + ": " + name + " declares " + std::to_string(stat.size) +
                                          " bytes, more than " + kind_ + " may hold here");
  }
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> file(zip_fopen(archive_, name.c_str(), 0), zip_fclose);
  if (!file) throw Error(ErrorCode::data_loss, path_ + ": cannot open " + name + ": " + zip_strerror(archive_));
  std::string bytes(size_t(stat.size), '\0');
  zip_int64_t got = zip_fread(file.get(), bytes.data(), stat.size);
  if (got < 0 || zip_uint64_t(got) != stat.size) {
    throw Error(ErrorCode::data_loss, path_ + ": " + name + " is damaged or truncated");
  }
  return bytes;
}

}  // namespace tenfold::io
