// Dataset sources: from_tensor_slices, range, from_generator.
#include "core/error.h"
#include "data/dataset.h"

namespace tenfold::data {

namespace {

TensorSpec spec_of_slice(const Tensor& tensor) {
  const auto& dims = tensor.shape().dims();
  return {std::vector<int64_t>(dims.begin() + 1, dims.end()), tensor.dtype()};
}

class TensorSlices : public DatasetImpl {
 public:
  explicit TensorSlices(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {}

  std::unique_ptr<Iterator> iterate(uint64_t) const override {
    struct SliceIterator : Iterator {
      const std::vector<Tensor>& tensors;
      int64_t row = 0;
      explicit SliceIterator(const std::vector<Tensor>& t) : tensors(t) {}
      std::optional<Element> next() override {
        if (row >= tensors[0].shape()[0]) return std::nullopt;
        Element element;
        element.reserve(tensors.size());
        for (const Tensor& tensor : tensors) {
          element.push_back(tensor.row(row));  // a view: no copy
        }
        ++row;
        return element;
      }
    };
    return std::make_unique<SliceIterator>(tensors_);
  }
  int64_t cardinality() const override { return tensors_[0].shape()[0]; }
  std::vector<TensorSpec> element_spec() const override {
    std::vector<TensorSpec> specs;
    for (const Tensor& tensor : tensors_) specs.push_back(spec_of_slice(tensor));
    return specs;
  }

 private:
  std::vector<Tensor> tensors_;
};

class Range : public DatasetImpl {
 public:
  Range(int64_t start, int64_t stop, int64_t step) : start_(start), stop_(stop), step_(step) {}
  std::unique_ptr<Iterator> iterate(uint64_t) const override {
    struct RangeIterator : Iterator {
      int64_t value, stop, step;
      std::optional<Element> next() override {
        if (step > 0 ? value >= stop : value <= stop) return std::nullopt;
        Tensor scalar(Shape{}, DType::int32);
        scalar.data<int32_t>()[0] = int32_t(value);
        value += step;
        return Element{scalar};
      }
    };
    auto iterator = std::make_unique<RangeIterator>();
    iterator->value = start_;
    iterator->stop = stop_;
    iterator->step = step_;
    return iterator;
  }
  int64_t cardinality() const override {
    int64_t span = step_ > 0 ? stop_ - start_ : start_ - stop_;
    int64_t magnitude = step_ > 0 ? step_ : -step_;
    return span <= 0 ? 0 : (span + magnitude - 1) / magnitude;
  }
  std::vector<TensorSpec> element_spec() const override { return {{{}, DType::int32}}; }

 private:
  int64_t start_, stop_, step_;
};

class Generator : public DatasetImpl {
 public:
  using Make = std::function<std::function<std::optional<Element>()>()>;
  Generator(Make make, std::vector<TensorSpec> spec) : make_(std::move(make)), spec_(std::move(spec)) {}
  std::unique_ptr<Iterator> iterate(uint64_t) const override {
    struct GeneratorIterator : Iterator {
      std::function<std::optional<Element>()> generate;
      std::optional<Element> next() override { return generate(); }
    };
    auto iterator = std::make_unique<GeneratorIterator>();
    iterator->generate = make_();
    return iterator;
  }
  int64_t cardinality() const override { return UNKNOWN_CARDINALITY; }
  std::vector<TensorSpec> element_spec() const override { return spec_; }

 private:
  Make make_;
  std::vector<TensorSpec> spec_;
};

}  // namespace

Dataset Dataset::from_tensor_slices(const std::vector<Tensor>& tensors) {
  check_argument(!tensors.empty(), "from_tensor_slices needs at least one tensor");
  for (const Tensor& tensor : tensors) {
    check_argument(tensor.shape().rank() >= 1 && tensor.shape()[0] == tensors[0].shape()[0],
                   "from_tensor_slices needs tensors with the same first dimension, got " +
                       tensors[0].shape().to_string() + " and " + tensor.shape().to_string());
  }
  return Dataset(std::make_shared<TensorSlices>(tensors));
}

Dataset Dataset::range(int64_t start, int64_t stop, int64_t step) {
  check_argument(step != 0, "range needs a non-zero step");
  return Dataset(std::make_shared<Range>(start, stop, step));
}

Dataset Dataset::from_generator(
    std::function<std::function<std::optional<Element>()>()> make_generator,
    std::vector<TensorSpec> element_spec) {
  return Dataset(std::make_shared<Generator>(std::move(make_generator), std::move(element_spec)));
}

std::vector<Element> Dataset::collect(uint64_t epoch) const {
  check_argument(cardinality() != INFINITE_CARDINALITY,
                 "cannot collect an infinite dataset; take() a finite part first");
  std::vector<Element> elements;
  auto iterator = iterate(epoch);
  while (auto element = iterator->next()) elements.push_back(std::move(*element));
  return elements;
}

}  // namespace tenfold::data
