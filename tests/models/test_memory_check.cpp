// The memory check before training: the line measured at two small batches predicts what the
// compiled steps of a large batch really hold, and training that does not fit is refused with
// the largest batch that does.
#include <gtest/gtest.h>

#include "core/error.h"
#include "distribute/strategy.h"
#include "models/memory_check.h"
#include "models/seed_cnn.h"
#include "support/check.h"

namespace tenfold {
namespace {

using testing::error_of;

TEST(MemoryCheck, MeasuredLinePredictsALargeBatch) {
  auto model = models::seed_cnn();
  model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  models::ReplicaMemory replica = models::measure_replica_memory(*model);
  // At least the pooled output (the fused Conv2D+MaxPooling2D never stores the convolution's).
  EXPECT_GT(replica.bytes_per_sample, 13 * 13 * 32 * 4);
  for (int64_t batch : {300, 1000}) {
    size_t before = allocated_bytes();
    models::CompiledStep training(model->graph(), batch, true);
    models::CompiledStep evaluation(model->graph(), batch, false);
    double actual = double(allocated_bytes() - before);
    // Never short by more than 2% (the check would admit what does not fit); over by up to 5%,
    // since a large batch can get leaner oneDNN scratchpads than the measured 64 and 128 (on an
    // AMD EPYC, 2 MiB L2: +2.6% at 1000).
    EXPECT_GE(replica.bytes(batch), 0.98 * actual) << "batch " << batch;
    EXPECT_LE(replica.bytes(batch), 1.05 * actual) << "batch " << batch;
  }
}

TEST(MemoryCheck, RefusesWhatDoesNotFitNamingTheLargestBatchThatDoes) {
  auto strategy = distribute::Strategy::mirrored(distribute::split_cpu(2));
  std::unique_ptr<models::Sequential> model;
  {
    auto scope = strategy->scope();
    model = models::seed_cnn();
    model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  }
  const size_t limit = size_t(200) << 20;
  std::string message = error_of([&] { models::check_training_memory(*model, 8192, limit, "a test limit"); });
  EXPECT_NE(message.find("not enough memory for a global batch of 8192: training needs "), std::string::npos) << message;
  EXPECT_NE(message.find("4096 samples each, x 2 local replicas"), std::string::npos) << message;
  EXPECT_NE(message.find("but 200.0 MiB is available (a test limit)"), std::string::npos) << message;
  const std::string label = "the largest per-replica batch that fits is ";
  ASSERT_NE(message.find(label), std::string::npos) << message;
  const int64_t fits = std::stoll(message.substr(message.find(label) + label.size()));
  EXPECT_NE(message.find("(global batch " + std::to_string(2 * fits) + " on 2 replicas)"), std::string::npos);
  EXPECT_NO_THROW(models::check_training_memory(*model, 2 * fits, limit, "a test limit"));
  EXPECT_THROW(models::check_training_memory(*model, 2 * fits + 2, limit, "a test limit"), Error);
  message = error_of([&] { models::check_training_memory(*model, 64, 1 << 20, "a test limit"); });
  EXPECT_NE(message.find("not even a batch of 1 per replica fits"), std::string::npos) << message;
}

TEST(MemoryCheck, FormatsBytes) {
  EXPECT_EQ(models::format_bytes(12), "12 bytes");
  EXPECT_EQ(models::format_bytes(48 * 1024), "48.0 KiB");
  EXPECT_EQ(models::format_bytes(1.5 * (1 << 30)), "1.5 GiB");
}

}  // namespace
}  // namespace tenfold
