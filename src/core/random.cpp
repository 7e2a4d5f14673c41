#include "core/random.h"

namespace tenfold {

namespace {
Random global_generator(1337);
}  // namespace

Random& global_random() { return global_generator; }

void set_random_seed(uint64_t seed) { global_generator = Random(seed); }

}  // namespace tenfold
