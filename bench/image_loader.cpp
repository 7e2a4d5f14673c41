// Images/s of data::image_dataset_from_directory over a folder of images (listing, decoding,
// resizing, shuffling, batching), as a training epoch reads them. Prints JSON;
// bench/image_folder.py compares with Keras' image_dataset_from_directory on the same files.
//   tenfold-bench-images DIR HEIGHT WIDTH
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "data/image_directory.h"

using namespace tenfold;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: tenfold-bench-images DIR HEIGHT WIDTH\n");
    return 2;
  }
  data::ImageDirectoryOptions options;
  options.image_size = {std::atoll(argv[2]), std::atoll(argv[3])};
  options.batch_size = 512;
  options.seed = 1;
  data::Dataset dataset = data::image_dataset_from_directory(argv[1], options).dataset;
  double best = 1e30;
  int64_t images = 0;
  for (int pass = 0; pass < 3; ++pass) {  // the first warms the page cache
    const auto start = std::chrono::steady_clock::now();
    images = 0;
    auto iterator = dataset.iterate(uint64_t(pass));
    while (auto batch = iterator->next()) images += (*batch)[0].shape()[0];
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (pass > 0 && seconds < best) best = seconds;
  }
  std::printf("{\"images\": %lld, \"seconds\": %.4f, \"images_per_second\": %.1f}\n", (long long)images, best,
              double(images) / best);
  return 0;
}
