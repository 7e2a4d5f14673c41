// libFuzzer target for the readers of users' data files (JPEG images, NumPy arrays, CSV
// tables): any bytes must give their data or a tenfold::Error, never a crash, a hang or an
// allocation the file's header alone asks for.
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "datasets/csv.h"
#include "datasets/jpeg.h"
#include "datasets/numpy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (int channels : {1, 3}) {
    try {
      tenfold::datasets::decode_jpeg(bytes, channels, "fuzz input");
    } catch (const tenfold::Error&) {
    }
  }
  try {
    tenfold::datasets::parse_npy(text, "fuzz input").to_tensor("fuzz input");
  } catch (const tenfold::Error&) {
  }
  try {
    tenfold::datasets::parse_csv(text, "fuzz input", {"label", {"kind"}});
  } catch (const tenfold::Error&) {
  }
  return 0;
}
