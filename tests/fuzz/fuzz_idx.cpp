// libFuzzer target for the IDX reader: any bytes, raw or gzip, must give a tensor or a
// tenfold::Error, never a crash, a hang or an allocation the file cannot back.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "datasets/idx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/tenfold_fuzz_idx_" + std::to_string(getpid());
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  try {
    tenfold::datasets::read_idx(path);
  } catch (const tenfold::Error&) {
  }
  return 0;
}
