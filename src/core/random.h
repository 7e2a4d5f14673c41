#pragma once
// A seeded generator whose sequence is the same on every platform and compiler
// (std:: distributions are not), so a seed reproduces a run everywhere.
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace tenfold {

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  /// splitmix64's step between states, and its output function: mix(state + k * increment)
  /// is the k-th output, so a loop over k computes a stretch of the sequence in any order
  /// (and vectorizes).
  static constexpr uint64_t increment = 0x9e3779b97f4a7c15ULL;
  static constexpr uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// The n-th output of the sequence that starts at `state` (n from 1): a random layer's
  /// draws for its n-th call, a mask's bits for its n-th element.
  static constexpr uint64_t nth(uint64_t state, uint64_t n) { return mix(state + increment * n); }
  /// The next 64 random bits (splitmix64).
  uint64_t next_u64() { return mix(state_ += increment); }
  /// Uniform in [0, 1) with 24 random bits, exact in float.
  float uniform() { return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f); }
  /// Uniform in [low, high).
  float uniform(float low, float high) { return low + (high - low) * uniform(); }
  /// Uniform integer in [0, bound).
  uint64_t below(uint64_t bound) { return next_u64() % bound; }
  /// A key for one stream of draws, from a seed and what tells the streams apart (a layer's
  /// worker, replica and batch size): no two of them share draws.
  static uint64_t stream_key(uint64_t seed, std::initializer_list<uint64_t> parts) {
    uint64_t key = seed;
    for (uint64_t part : parts) key = mix(key ^ mix(part + increment));
    return key;
  }
  /// A seed from a name (FNV-1a): what unseeded random layers draw with, so two of them in a
  /// model (their names differ) never share draws, on every platform.
  static constexpr uint64_t seed_from(std::string_view name) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (char c : name) hash = (hash ^ uint8_t(c)) * 0x100000001b3ULL;
    return hash;
  }
  /// The whole state: saved in a training backup, restored to resume the same sequence.
  uint64_t state() const { return state_; }
  void set_state(uint64_t state) { state_ = state; }

 private:
  uint64_t state_;
};

}  // namespace tenfold

namespace tenfold {

/// The generator layers draw initial weights from (Keras' global seed generator).
Random& global_random();
/// Reseeds it, as keras.utils.set_random_seed does.
void set_random_seed(uint64_t seed);

}  // namespace tenfold
