// Dataset::batch and unbatch.
#include <cstring>

#include "core/error.h"
#include "data/operator.h"

namespace tenfold::data {

namespace {

/// Stacks equally shaped components along a new first dimension.
Element stack(const std::vector<Element>& elements) {
  Element batch;
  for (size_t c = 0; c < elements[0].size(); ++c) {
    const Tensor& first = elements[0][c];
    Tensor stacked = Tensor::uninitialized(first.shape().with_leading(int64_t(elements.size())), first.dtype());
    auto* out = static_cast<std::byte*>(stacked.raw_data());
    for (const Element& element : elements) {
      const Tensor& part = element[c];
      if (part.shape() != first.shape() || part.dtype() != first.dtype()) {
        throw Error(ErrorCode::invalid_argument,
                    "batch needs elements of one shape: component " + std::to_string(c) +
                        " has shape " + first.shape().to_string() + " and " +
                        part.shape().to_string() + "; map them to one shape first");
      }
      std::memcpy(out, part.raw_data(), part.num_bytes());
      out += part.num_bytes();
    }
    batch.push_back(std::move(stacked));
  }
  return batch;
}

}  // namespace

Dataset Dataset::batch(int64_t batch_size, bool drop_remainder) const {
  check_argument(batch_size >= 1, "batch needs batch_size >= 1, got " + std::to_string(batch_size));
  auto iterate = [=](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    auto source = shared_iterator(input, epoch);
    return std::make_unique<FunctionIterator>([=]() -> std::optional<Element> {
      std::vector<Element> elements;
      while (int64_t(elements.size()) < batch_size) {
        auto element = source->next();
        if (!element) break;
        elements.push_back(std::move(*element));
      }
      if (elements.empty() || (drop_remainder && int64_t(elements.size()) < batch_size)) {
        return std::nullopt;
      }
      return stack(elements);
    });
  };
  int64_t input = cardinality();
  int64_t result = !is_finite(input) ? input
                   : drop_remainder  ? input / batch_size
                                     : (input + batch_size - 1) / batch_size;
  std::vector<TensorSpec> spec = element_spec();
  for (TensorSpec& each : spec) each.shape.insert(each.shape.begin(), drop_remainder ? batch_size : -1);
  return Dataset(std::make_shared<Unary>(impl_, iterate, result, spec));
}

Dataset Dataset::unbatch() const {
  std::vector<TensorSpec> spec = element_spec();
  for (const TensorSpec& each : spec) {
    check_argument(!each.shape.empty(), "unbatch needs components with a batch dimension");
  }
  auto iterate = [](const DatasetImpl& input, uint64_t epoch) -> std::unique_ptr<Iterator> {
    struct State {
      std::shared_ptr<Iterator> source;
      Element batch;
      int64_t row = 0;
    };
    auto state = std::make_shared<State>(State{shared_iterator(input, epoch), {}, 0});
    return std::make_unique<FunctionIterator>([state]() -> std::optional<Element> {
      while (state->batch.empty() || state->row >= state->batch[0].shape()[0]) {
        auto batch = state->source->next();
        if (!batch) return std::nullopt;
        state->batch = std::move(*batch);
        state->row = 0;
      }
      Element element;
      for (const Tensor& component : state->batch) {
        element.push_back(component.row(state->row));
      }
      ++state->row;
      return element;
    });
  };
  for (TensorSpec& each : spec) each.shape.erase(each.shape.begin());
  return Dataset(std::make_shared<Unary>(impl_, iterate, UNKNOWN_CARDINALITY, spec));
}

}  // namespace tenfold::data
