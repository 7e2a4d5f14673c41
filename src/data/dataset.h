#pragma once
// tf.data for Tenfold: a Dataset is an immutable recipe for a stream of elements, each a tuple
// of tensors (features, labels, optional sample weights). Operators return new Datasets;
// nothing runs until iterate(). prefetch and parallel map run on background threads; an
// iterator that is destroyed stops and joins them.
//
//   auto train = Dataset::from_tensor_slices({x, y}).shuffle(10000).batch(512).prefetch(AUTOTUNE);
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tenfold::data {

/// One element: its components, e.g. {image, label}.
using Element = std::vector<Tensor>;

/// For prefetch buffer sizes and map parallelism: chosen, and adjusted, by the pipeline.
constexpr int64_t AUTOTUNE = -1;
/// cardinality() of a dataset that never ends, and of one whose length cannot be known.
constexpr int64_t INFINITE_CARDINALITY = -1;
constexpr int64_t UNKNOWN_CARDINALITY = -2;

/// Shape (-1 where unknown, e.g. the batch dimension of batch() without drop_remainder) and
/// dtype of one component.
struct TensorSpec {
  std::vector<int64_t> shape;
  DType dtype = DType::float32;
  bool operator==(const TensorSpec&) const = default;
};

class Iterator {
 public:
  virtual ~Iterator() = default;
  /// The next element, or nullopt at the end. Rethrows an error raised producing it.
  virtual std::optional<Element> next() = 0;
};

/// A dataset's implementation: operators are DatasetImpls over their input's.
class DatasetImpl {
 public:
  virtual ~DatasetImpl() = default;
  /// A new pass; `epoch` (0, 1, ...) lets shuffle draw a new order each pass.
  virtual std::unique_ptr<Iterator> iterate(uint64_t epoch) const = 0;
  virtual int64_t cardinality() const = 0;
  virtual std::vector<TensorSpec> element_spec() const = 0;
};

class Dataset {
 public:
  explicit Dataset(std::shared_ptr<const DatasetImpl> impl) : impl_(std::move(impl)) {}

  // Sources.
  /// Slices each tensor along its first dimension; all must have the same first dimension.
  static Dataset from_tensor_slices(const std::vector<Tensor>& tensors);
  /// Scalars start, start + step, ... before stop (int32 elements).
  static Dataset range(int64_t start, int64_t stop, int64_t step = 1);
  static Dataset range(int64_t stop) { return range(0, stop); }
  /// `make_generator()` is called once per pass; the generator returns nullopt at the end.
  static Dataset from_generator(
      std::function<std::function<std::optional<Element>()>()> make_generator,
      std::vector<TensorSpec> element_spec);

  // Transformations, with tf.data's meaning.
  /// fn(element) -> element; with num_parallel_calls > 1 (or AUTOTUNE) on background threads,
  /// in the input's order. What fn returns is not known without running it: give its
  /// `output_spec`, or the element spec is empty (unknown).
  Dataset map(std::function<Element(const Element&)> fn, int64_t num_parallel_calls = 1,
              std::vector<TensorSpec> output_spec = {}) const;
  Dataset filter(std::function<bool(const Element&)> predicate) const;
  /// A buffer of `buffer_size` elements drawn from at random. Without a seed the order differs
  /// run to run; with reshuffle_each_iteration each pass draws a new order.
  Dataset shuffle(int64_t buffer_size, std::optional<uint64_t> seed = std::nullopt,
                  bool reshuffle_each_iteration = true) const;
  /// Stacks `batch_size` consecutive elements; the last batch may be smaller unless
  /// drop_remainder.
  Dataset batch(int64_t batch_size, bool drop_remainder = false) const;
  /// The inverse of batch: each batch's rows as elements.
  Dataset unbatch() const;
  /// The dataset `count` times over (-1: forever).
  Dataset repeat(int64_t count = -1) const;
  Dataset take(int64_t count) const;
  Dataset skip(int64_t count) const;
  /// Every num_shards-th element, starting at index.
  Dataset shard(int64_t num_shards, int64_t index) const;
  /// Elements kept in memory after the first complete pass; later passes replay them.
  Dataset cache() const;
  /// The same with a file: written by the first complete pass, read by later passes and
  /// later runs (delete the file when the input changes).
  Dataset cache(const std::string& path) const;
  /// Elements produced ahead on a background thread, up to `buffer_size` (AUTOTUNE: grown
  /// while the consumer finds the buffer empty).
  Dataset prefetch(int64_t buffer_size) const;
  /// This dataset's elements, then other's.
  Dataset concatenate(const Dataset& other) const;
  /// Elements side by side: components of a, then of b; ends with the shorter.
  static Dataset zip(const Dataset& a, const Dataset& b);

  int64_t cardinality() const { return impl_->cardinality(); }
  std::vector<TensorSpec> element_spec() const { return impl_->element_spec(); }
  std::unique_ptr<Iterator> iterate(uint64_t epoch = 0) const { return impl_->iterate(epoch); }
  /// All elements of one pass (for tests and small data).
  std::vector<Element> collect(uint64_t epoch = 0) const;

 private:
  std::shared_ptr<const DatasetImpl> impl_;
};

}  // namespace tenfold::data
