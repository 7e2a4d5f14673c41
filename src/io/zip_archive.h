#pragma once
// Zip archives through libzip, for Keras' .keras files: entries are stored uncompressed, as
// Keras writes them; reading checks each entry's declared size against a limit before
// allocating, and libzip checks its CRC.
#include <map>
#include <string>

namespace tenfold::io {

/// Writes `entries` (name -> bytes) as a new archive at `path`.
void write_zip(const std::string& path, const std::map<std::string, std::string>& entries);

/// Reads one entry of the archive at `path`; a missing entry, a damaged archive or an entry
/// larger than `max_bytes` is a clear error.
std::string read_zip_entry(const std::string& path, const std::string& name, uint64_t max_bytes);

}  // namespace tenfold::io
