// libFuzzer target for the model-file loader: any bytes, as a .h5 file or (starting with
// "PK") a .keras archive, must give a model or a tenfold::Error, never a crash, a hang or an
// allocation the file cannot back.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "io/model_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bool archive = size >= 2 && data[0] == 'P' && data[1] == 'K';
  static const std::string stem = "/tmp/tenfold_fuzz_model_" + std::to_string(getpid());
  const std::string path = stem + (archive ? ".keras" : ".h5");
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  try {
    tenfold::io::load_model(path);
  } catch (const tenfold::Error&) {
  }
  return 0;
}
