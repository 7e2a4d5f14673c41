#pragma once
// Zip archives through libzip, for Keras' .keras files and NumPy's .npz files. Tenfold writes
// entries uncompressed, as Keras does; reading takes stored or deflated entries (as
// np.savez_compressed writes them), checks each entry's declared size against a limit before
// allocating, and libzip checks its CRC.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct zip;

namespace tenfold::io {

/// Writes `entries` (name -> bytes) as a new archive at `path`.
void write_zip(const std::string& path, const std::map<std::string, std::string>& entries);

/// An archive open for reading. `kind` names what the file should be ("a Keras .keras file")
/// in errors: a missing file, a damaged archive, a missing entry or an entry larger than
/// asked for are clear errors naming the path.
class ZipReader {
 public:
  ZipReader(const std::string& path, const std::string& kind);
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  std::vector<std::string> entry_names() const;
  std::string read(const std::string& name, uint64_t max_bytes) const;

 private:
  std::string path_, kind_;
  struct zip* archive_ = nullptr;
};

}  // namespace tenfold::io
