#pragma once
// Crash-safe replacement of a file: the new content is written to a temporary file beside it,
// flushed to disk (fsync), renamed over the old one, and the directory is flushed. At any
// instant the path holds either the complete old file or the complete new one.
#include <functional>
#include <string>

namespace tenfold::io {

/// Calls write(temporary_path), then makes it `path`. On an error the temporary file is
/// removed and `path` is untouched.
void replace_file_atomically(const std::string& path,
                             const std::function<void(const std::string& temporary_path)>& write);

}  // namespace tenfold::io
