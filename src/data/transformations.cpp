// Structural operators: filter, take, skip, repeat, shard, cache, concatenate, zip.
// (map and prefetch, which may run threads, are in parallel.cpp.)
#include <mutex>

#include "core/error.h"
#include "data/operator.h"

namespace tenfold::data {

Dataset Dataset::filter(std::function<bool(const Element&)> predicate) const {
  auto iterate = [predicate](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    auto source = shared_iterator(input, epoch);
    return std::make_unique<FunctionIterator>([source, predicate]() -> std::optional<Element> {
      while (auto element = source->next()) {
        if (predicate(*element)) return element;
      }
      return std::nullopt;
    });
  };
  int64_t cardinality = impl_->cardinality() == INFINITE_CARDINALITY ? INFINITE_CARDINALITY
                                                                     : UNKNOWN_CARDINALITY;
  return Dataset(std::make_shared<Unary>(impl_, iterate, cardinality, element_spec()));
}

Dataset Dataset::take(int64_t count) const {
  check_argument(count >= -1, "take needs a count >= -1 (-1: all), got " + std::to_string(count));
  if (count == -1) return *this;
  auto iterate = [count](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    auto source = shared_iterator(input, epoch);
    auto taken = std::make_shared<int64_t>(0);
    return std::make_unique<FunctionIterator>([source, taken, count]() -> std::optional<Element> {
      if (*taken >= count) return std::nullopt;
      ++*taken;
      return source->next();
    });
  };
  int64_t input = cardinality();
  int64_t result = input == INFINITE_CARDINALITY ? count
                   : is_finite(input)             ? std::min(input, count)
                                                  : UNKNOWN_CARDINALITY;
  return Dataset(std::make_shared<Unary>(impl_, iterate, result, element_spec()));
}

Dataset Dataset::skip(int64_t count) const {
  check_argument(count >= 0, "skip needs a count >= 0, got " + std::to_string(count));
  auto iterate = [count](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    auto source = shared_iterator(input, epoch);
    for (int64_t i = 0; i < count && source->next(); ++i) {
    }
    return std::make_unique<FunctionIterator>([source] { return source->next(); });
  };
  int64_t input = cardinality();
  int64_t result = is_finite(input) ? std::max<int64_t>(input - count, 0) : input;
  return Dataset(std::make_shared<Unary>(impl_, iterate, result, element_spec()));
}

Dataset Dataset::repeat(int64_t count) const {
  check_argument(count >= -1, "repeat needs a count >= -1 (-1: forever), got " + std::to_string(count));
  auto iterate = [count](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    // Each repetition is a new pass of the input, so a shuffle inside reshuffles.
    struct State {
      std::unique_ptr<Iterator> source;
      int64_t pass = 0;
      bool produced = false;  // an empty input must not loop forever
    };
    auto state = std::make_shared<State>();
    const DatasetImpl* in = &input;
    uint64_t base = epoch * 1000003ULL;
    return std::make_unique<FunctionIterator>([state, in, base, count]() -> std::optional<Element> {
      while (count == -1 || state->pass < count) {
        if (!state->source) state->source = in->iterate(base + uint64_t(state->pass));
        if (auto element = state->source->next()) {
          state->produced = true;
          return element;
        }
        state->source.reset();
        ++state->pass;
        if (!state->produced) return std::nullopt;
      }
      return std::nullopt;
    });
  };
  int64_t input = cardinality();
  int64_t result = input == 0                ? 0
                   : count == -1             ? INFINITE_CARDINALITY
                   : is_finite(input)        ? input * count
                                             : input;
  return Dataset(std::make_shared<Unary>(impl_, iterate, result, element_spec()));
}

Dataset Dataset::shard(int64_t num_shards, int64_t index) const {
  check_argument(num_shards >= 1 && index >= 0 && index < num_shards,
                 "shard needs num_shards >= 1 and 0 <= index < num_shards, got " +
                     std::to_string(num_shards) + " and " + std::to_string(index));
  auto iterate = [num_shards, index](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    auto source = shared_iterator(input, epoch);
    auto position = std::make_shared<int64_t>(0);
    return std::make_unique<FunctionIterator>([source, position, num_shards, index]() -> std::optional<Element> {
      while (auto element = source->next()) {
        if ((*position)++ % num_shards == index) return element;
      }
      return std::nullopt;
    });
  };
  int64_t input = cardinality();
  int64_t result = is_finite(input) ? input / num_shards + (index < input % num_shards ? 1 : 0) : input;
  return Dataset(std::make_shared<Unary>(impl_, iterate, result, element_spec()));
}

Dataset Dataset::cache() const {
  // Filled by the first pass that runs to its end; until then every pass reads the input.
  struct Cache {
    std::mutex mutex;
    std::shared_ptr<const std::vector<Element>> elements;
  };
  auto cache = std::make_shared<Cache>();
  auto iterate = [cache](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    std::shared_ptr<const std::vector<Element>> cached;
    {
      std::lock_guard<std::mutex> lock(cache->mutex);
      cached = cache->elements;
    }
    if (cached) {
      auto position = std::make_shared<size_t>(0);
      return std::make_unique<FunctionIterator>([cached, position]() -> std::optional<Element> {
        if (*position >= cached->size()) return std::nullopt;
        return (*cached)[(*position)++];
      });
    }
    auto source = shared_iterator(input, epoch);
    auto recorded = std::make_shared<std::vector<Element>>();
    return std::make_unique<FunctionIterator>([source, recorded, cache]() -> std::optional<Element> {
      auto element = source->next();
      if (element) {
        recorded->push_back(*element);
      } else {
        std::lock_guard<std::mutex> lock(cache->mutex);
        if (!cache->elements) cache->elements = recorded;
      }
      return element;
    });
  };
  return Dataset(std::make_shared<Unary>(impl_, iterate, cardinality(), element_spec()));
}

Dataset Dataset::concatenate(const Dataset& other) const {
  check_argument(element_spec().size() == other.element_spec().size(),
                 "concatenate needs datasets with the same number of components");
  auto second = other.impl_;
  auto iterate = [second](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    auto first = shared_iterator(input, epoch);
    auto rest = std::make_shared<std::unique_ptr<Iterator>>();
    return std::make_unique<FunctionIterator>([first, rest, second, epoch]() -> std::optional<Element> {
      if (!*rest) {
        if (auto element = first->next()) return element;
        *rest = second->iterate(epoch);
      }
      return (*rest)->next();
    });
  };
  int64_t a = cardinality(), b = other.cardinality();
  int64_t result = a == INFINITE_CARDINALITY || b == INFINITE_CARDINALITY ? INFINITE_CARDINALITY
                   : is_finite(a) && is_finite(b)                          ? a + b
                                                                           : UNKNOWN_CARDINALITY;
  return Dataset(std::make_shared<Unary>(impl_, iterate, result, element_spec()));
}

Dataset Dataset::zip(const Dataset& a, const Dataset& b) {
  auto second = b.impl_;
  auto iterate = [second](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    auto left = shared_iterator(input, epoch);
    std::shared_ptr<Iterator> right(second->iterate(epoch));
    return std::make_unique<FunctionIterator>([left, right]() -> std::optional<Element> {
      auto x = left->next();
      if (!x) return std::nullopt;
      auto y = right->next();
      if (!y) return std::nullopt;
      x->insert(x->end(), y->begin(), y->end());
      return x;
    });
  };
  int64_t ca = a.cardinality(), cb = b.cardinality();
  int64_t result = is_finite(ca) && is_finite(cb) ? std::min(ca, cb)
                   : ca == INFINITE_CARDINALITY    ? cb
                   : cb == INFINITE_CARDINALITY    ? ca
                                                   : UNKNOWN_CARDINALITY;
  std::vector<TensorSpec> spec = a.element_spec();
  for (const TensorSpec& each : b.element_spec()) spec.push_back(each);
  return Dataset(std::make_shared<Unary>(a.impl_, iterate, result, spec));
}

}  // namespace tenfold::data
