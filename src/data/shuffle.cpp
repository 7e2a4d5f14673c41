// Dataset::shuffle: tf.data's buffer shuffle.
#include "core/error.h"
#include "core/random.h"
#include "data/operator.h"

namespace tenfold::data {

Dataset Dataset::shuffle(int64_t buffer_size, std::optional<uint64_t> seed,
                         bool reshuffle_each_iteration) const {
  check_argument(buffer_size >= 1, "shuffle needs buffer_size >= 1, got " + std::to_string(buffer_size));
  uint64_t base_seed = seed ? *seed : global_random().next_u64();
  auto iterate = [=](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    struct State {
      std::shared_ptr<Iterator> source;
      std::vector<Element> buffer;
      Random random;
      bool filled = false;
    };
    uint64_t pass_seed = reshuffle_each_iteration ? Random(base_seed ^ (epoch * 0x9e3779b97f4a7c15ULL)).next_u64()
                                                  : base_seed;
    auto state = std::make_shared<State>(State{shared_iterator(input, epoch), {}, Random(pass_seed)});
    return std::make_unique<FunctionIterator>([state, buffer_size]() -> std::optional<Element> {
      if (!state->filled) {
        while (int64_t(state->buffer.size()) < buffer_size) {
          auto element = state->source->next();
          if (!element) break;
          state->buffer.push_back(std::move(*element));
        }
        state->filled = true;
      }
      if (state->buffer.empty()) return std::nullopt;
      // Take a random element and put the next input element in its place.
      size_t index = size_t(state->random.below(state->buffer.size()));
      Element chosen = std::move(state->buffer[index]);
      if (auto replacement = state->source->next()) {
        state->buffer[index] = std::move(*replacement);
      } else {
        state->buffer[index] = std::move(state->buffer.back());
        state->buffer.pop_back();
      }
      return chosen;
    });
  };
  return Dataset(std::make_shared<Unary>(impl_, iterate, cardinality(), element_spec()));
}

}  // namespace tenfold::data
