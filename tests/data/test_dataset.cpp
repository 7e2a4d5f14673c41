// tf.data semantics of data::Dataset.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "core/error.h"
#include "data/dataset.h"

namespace tenfold::data {
namespace {

int32_t value_of(const Element& element) { return element[0].data<int32_t>()[0]; }

std::vector<int32_t> values(const Dataset& dataset, uint64_t epoch = 0) {
  std::vector<int32_t> result;
  for (const Element& element : dataset.collect(epoch)) result.push_back(value_of(element));
  return result;
}

std::vector<int32_t> iota(int32_t begin, int32_t end, int32_t step = 1) {
  std::vector<int32_t> result;
  for (int32_t v = begin; v < end; v += step) result.push_back(v);
  return result;
}

int64_t thread_count() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                       std::filesystem::directory_iterator{});
}

TEST(Dataset, FromTensorSlicesAndBatch) {
  Tensor x(Shape{10, 2}), y(Shape{10}, DType::int32);
  for (int i = 0; i < 20; ++i) x.data<float>()[i] = float(i);
  for (int i = 0; i < 10; ++i) y.data<int32_t>()[i] = i;
  Dataset slices = Dataset::from_tensor_slices({x, y});
  EXPECT_EQ(slices.cardinality(), 10);
  EXPECT_EQ(slices.element_spec()[0], (TensorSpec{{2}, DType::float32}));

  Dataset batched = slices.batch(4);
  EXPECT_EQ(batched.cardinality(), 3);
  EXPECT_EQ(batched.element_spec()[0], (TensorSpec{{-1, 2}, DType::float32}));
  auto batches = batched.collect();
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[2][0].shape(), (Shape{2, 2}));  // the remainder
  EXPECT_EQ(batches[1][0].data<float>()[0], 8.0f);
  EXPECT_EQ(batches[2][1].data<int32_t>()[1], 9);

  Dataset dropped = slices.batch(4, true);
  EXPECT_EQ(dropped.cardinality(), 2);
  EXPECT_EQ(dropped.collect().size(), 2u);
  EXPECT_EQ(dropped.element_spec()[1], (TensorSpec{{4}, DType::int32}));
  auto rows = batched.unbatch().collect();
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows[7][1].data<int32_t>()[0], 7);
  EXPECT_THROW(Dataset::from_tensor_slices({x, Tensor(Shape{9})}), Error);
}

TEST(Dataset, ShuffleIsASeededPermutationNewEachEpoch) {
  Dataset shuffled = Dataset::range(1000).shuffle(100, 42);
  auto first = values(shuffled, 0);
  auto sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(0, 1000));
  EXPECT_NE(first, iota(0, 1000));
  EXPECT_EQ(values(Dataset::range(1000).shuffle(100, 42), 0), first);  // reproducible
  EXPECT_NE(values(shuffled, 1), first);                                // reshuffled
  Dataset fixed = Dataset::range(1000).shuffle(100, 42, false);
  EXPECT_EQ(values(fixed, 0), values(fixed, 1));
  // A buffer of 1 keeps the order; a buffer of 100 moves no element back more than 99 places.
  EXPECT_EQ(values(Dataset::range(50).shuffle(1, 3)), iota(0, 50));
  for (size_t i = 0; i < first.size(); ++i) EXPECT_LE(first[i], int32_t(i) + 99);
}

TEST(Dataset, RepeatTakeSkipShardCounts) {
  Dataset ten = Dataset::range(10);
  EXPECT_EQ(values(ten.repeat(3)).size(), 30u);
  EXPECT_EQ(ten.repeat(3).cardinality(), 30);
  EXPECT_EQ(ten.repeat().cardinality(), INFINITE_CARDINALITY);
  EXPECT_EQ(values(ten.repeat().take(25)).size(), 25u);
  EXPECT_EQ(ten.repeat().take(25).cardinality(), 25);
  EXPECT_EQ(values(ten.skip(7)), iota(7, 10));
  EXPECT_EQ(ten.skip(12).cardinality(), 0);
  EXPECT_EQ(values(ten.take(3)), iota(0, 3));
  EXPECT_EQ(values(ten.shard(3, 1)), (std::vector<int32_t>{1, 4, 7}));
  EXPECT_EQ(ten.shard(3, 1).cardinality(), 3);
  EXPECT_EQ(ten.shard(3, 0).cardinality(), 4);
  EXPECT_EQ(values(Dataset::range(0).repeat()), std::vector<int32_t>{});  // empty, not a hang
  EXPECT_EQ(values(Dataset::range(2, 11, 3)), (std::vector<int32_t>{2, 5, 8}));
  EXPECT_EQ(ten.filter([](const Element& e) { return value_of(e) % 2 == 0; }).cardinality(),
            UNKNOWN_CARDINALITY);
  EXPECT_EQ(values(ten.filter([](const Element& e) { return value_of(e) % 2 == 0; })),
            iota(0, 10, 2));
  EXPECT_EQ(values(ten.take(2).concatenate(ten.skip(8))), (std::vector<int32_t>{0, 1, 8, 9}));
  auto zipped = Dataset::zip(ten, Dataset::range(100, 105)).collect();
  ASSERT_EQ(zipped.size(), 5u);
  EXPECT_EQ(zipped[4][1].data<int32_t>()[0], 104);
  EXPECT_THROW(ten.shard(3, 3), Error);
  EXPECT_THROW(ten.batch(0), Error);
}

TEST(Dataset, ParallelMapKeepsOrder) {
  auto slow_square = [](const Element& e) {
    int32_t v = value_of(e);
    std::this_thread::sleep_for(std::chrono::microseconds((v * 7919) % 300));
    Tensor out(Shape{}, DType::int32);
    out.data<int32_t>()[0] = v * v;
    return Element{out};
  };
  for (int64_t calls : {int64_t(1), int64_t(4), AUTOTUNE}) {
    auto result = values(Dataset::range(200).map(slow_square, calls));
    ASSERT_EQ(result.size(), 200u) << calls;
    for (int32_t i = 0; i < 200; ++i) ASSERT_EQ(result[size_t(i)], i * i) << calls;
  }
}

TEST(Dataset, AutotunedMapWidensWhileTheConsumerWaits) {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  auto slow = [&](const Element& e) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
    return e;
  };
  EXPECT_EQ(values(Dataset::range(40).map(slow, AUTOTUNE)), iota(0, 40));
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_LE(threads.size(), cores);  // started with one, grows up to one per core
  if (cores > 1) {
    EXPECT_GT(threads.size(), 1u);
  }
}

TEST(Dataset, PrefetchNeitherLosesNorDuplicates) {
  for (int64_t buffer : {int64_t(1), int64_t(8), AUTOTUNE}) {
    auto result = values(Dataset::range(5000).prefetch(buffer));
    EXPECT_EQ(result, iota(0, 5000)) << buffer;
  }
  auto epochs = Dataset::range(100).shuffle(100, 1).prefetch(AUTOTUNE);
  auto a = values(epochs, 0), b = values(epochs, 1);
  EXPECT_NE(a, b);
  std::sort(a.begin(), a.end());
  EXPECT_EQ(a, iota(0, 100));
}

TEST(Dataset, ErrorsReachTheConsumerWithTheirMessage) {
  auto failing = [](const Element& e) -> Element {
    if (value_of(e) == 37) throw Error(ErrorCode::invalid_argument, "element 37 is bad");
    return e;
  };
  for (int64_t calls : {int64_t(1), int64_t(3)}) {
    for (bool prefetch : {false, true}) {
      Dataset dataset = Dataset::range(100).map(failing, calls);
      if (prefetch) dataset = dataset.prefetch(4);
      auto iterator = dataset.iterate();
      int produced = 0;
      try {
        while (iterator->next()) ++produced;
        FAIL() << "no error";
      } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("element 37 is bad"), std::string::npos);
      }
      EXPECT_EQ(produced, 37) << "calls " << calls << " prefetch " << prefetch;
    }
  }
}

TEST(Dataset, DestroyingAnIteratorStopsItsThreads) {
  int64_t before = thread_count();
  for (int i = 0; i < 20; ++i) {
    auto iterator = Dataset::range(1000000).map([](const Element& e) { return e; }, 3).prefetch(AUTOTUNE).iterate();
    iterator->next();
    iterator->next();
  }  // each destroyed mid-epoch
  // A joined thread's /proc entry can outlive join() by a moment (so `before` may still count
  // an earlier test's threads): wait up to a second for the count to come down.
  for (int wait = 0; wait < 100 && thread_count() > before; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_LE(thread_count(), before);
}

TEST(Dataset, CacheReplaysAfterTheFirstCompletePass) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  Dataset counted = Dataset::range(5).map([calls](const Element& e) {
    ++*calls;
    return e;
  });
  Dataset cached = counted.cache();
  auto partial = cached.iterate();
  partial->next();  // an unfinished pass fills nothing
  partial.reset();
  EXPECT_EQ(values(cached, 0), iota(0, 5));
  EXPECT_EQ(values(cached, 1), iota(0, 5));
  EXPECT_EQ(calls->load(), 1 + 5);
}

TEST(Dataset, FileCacheIsWrittenByACompletePassAndReadAfter) {
  std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("tenfold_cache_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  std::string path = (directory / "train.cache").string();
  auto calls = std::make_shared<std::atomic<int>>(0);
  Tensor x(Shape{6, 2, 3}), y(Shape{6}, DType::int32);
  for (int i = 0; i < 36; ++i) x.data<float>()[i] = float(i) / 7;
  for (int i = 0; i < 6; ++i) y.data<int32_t>()[i] = 10 * i;
  Dataset cached = Dataset::from_tensor_slices({x, y})
                       .map([calls](const Element& e) {
                         ++*calls;
                         return e;
                       })
                       .cache(path);
  auto partial = cached.iterate();
  partial->next();
  partial.reset();
  EXPECT_FALSE(std::filesystem::exists(path));  // an interrupted pass leaves no cache
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory), {}), 0);

  auto first = cached.collect(0);
  EXPECT_TRUE(std::filesystem::exists(path));
  int calls_after_first = calls->load();
  auto second = cached.collect(1);
  EXPECT_EQ(calls->load(), calls_after_first);  // read from the file, not the input
  ASSERT_EQ(second.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(second[i][0].shape(), (Shape{2, 3}));
    EXPECT_EQ(second[i][1].data<int32_t>()[0], int32_t(10 * i));
    for (int k = 0; k < 6; ++k) EXPECT_EQ(second[i][0].data<float>()[k], first[i][0].data<float>()[k]);
  }

  // A damaged cache is a clear error, not a crash.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 5);
  try {
    cached.collect(2);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::data_loss);
    EXPECT_NE(std::string(error.what()).find("delete it"), std::string::npos);
  }
  std::ofstream(path, std::ios::binary) << "not a cache at all";
  EXPECT_THROW(cached.collect(3), Error);
  std::filesystem::remove_all(directory);
}

TEST(Dataset, FromGeneratorRunsAFreshGeneratorEachPass) {
  Dataset generated = Dataset::from_generator(
      [] {
        auto next = std::make_shared<int32_t>(0);
        return [next]() -> std::optional<Element> {
          if (*next >= 3) return std::nullopt;
          Tensor v(Shape{}, DType::int32);
          v.data<int32_t>()[0] = (*next)++;
          return Element{v};
        };
      },
      {{{}, DType::int32}});
  EXPECT_EQ(generated.cardinality(), UNKNOWN_CARDINALITY);
  EXPECT_EQ(values(generated), iota(0, 3));
  EXPECT_EQ(values(generated), iota(0, 3));
}

}  // namespace
}  // namespace tenfold::data
