#pragma once
// Pieces the Dataset operators are built from (internal to src/data/).
#include <functional>
#include <memory>

#include "data/dataset.h"

namespace tenfold::data {

/// An iterator that asks a function for each next element.
class FunctionIterator : public Iterator {
 public:
  explicit FunctionIterator(std::function<std::optional<Element>()> next) : next_(std::move(next)) {}
  std::optional<Element> next() override { return next_(); }

 private:
  std::function<std::optional<Element>()> next_;
};

/// An operator over one input dataset, defined by how it iterates and what it reports.
class Unary : public DatasetImpl {
 public:
  using Iterate = std::function<std::unique_ptr<Iterator>(const DatasetImpl& input, uint64_t epoch)>;
  Unary(std::shared_ptr<const DatasetImpl> input, Iterate iterate, int64_t cardinality,
        std::vector<TensorSpec> spec)
      : input_(std::move(input)), iterate_(std::move(iterate)), cardinality_(cardinality),
        spec_(std::move(spec)) {}
  std::unique_ptr<Iterator> iterate(uint64_t epoch) const override { return iterate_(*input_, epoch); }
  int64_t cardinality() const override { return cardinality_; }
  std::vector<TensorSpec> element_spec() const override { return spec_; }

 private:
  std::shared_ptr<const DatasetImpl> input_;
  Iterate iterate_;
  int64_t cardinality_;
  std::vector<TensorSpec> spec_;
};

/// A new pass of `input`, shared so the lambdas that advance it can be copied.
inline std::shared_ptr<Iterator> shared_iterator(const DatasetImpl& input, uint64_t epoch) {
  return std::shared_ptr<Iterator>(input.iterate(epoch));
}

inline bool is_finite(int64_t cardinality) { return cardinality >= 0; }

}  // namespace tenfold::data
