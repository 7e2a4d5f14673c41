// libFuzzer target for the PNG decoder: any bytes must give an image or a tenfold::Error, never
// a crash, a hang or an allocation the file's header alone asks for.
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "datasets/png.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  for (int channels : {1, 3, 4}) {
    try {
      tenfold::datasets::decode_png(bytes, channels, "fuzz input");
    } catch (const tenfold::Error&) {
    }
  }
  return 0;
}
