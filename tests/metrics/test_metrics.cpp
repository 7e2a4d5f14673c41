// Metrics against Keras' own results (tools/make_metric_fixtures.py): each metric, built from
// the name or the serialized object compile takes, updated with two batches. A metric's state
// is sums, so the states of replicas that each saw one batch add up to the metric of both:
// checked for every metric.
#include <gtest/gtest.h>

#include <fstream>

#include "metrics/metric.h"
#include "support/check.h"
#include "support/npy.h"

namespace tenfold::metrics {
namespace {

using nlohmann::json;
using testing::fixture_path;

json cases() {
  std::ifstream file(fixture_path("keras/metrics/cases.json"));
  return json::parse(file);
}

Tensor batch(const std::string& kind, const std::string& part, int b) {
  return testing::read_npy(fixture_path("keras/metrics/" + kind + "_" + part + "_" + std::to_string(b) + ".npy"));
}

class KerasMetrics : public ::testing::TestWithParam<size_t> {};

TEST_P(KerasMetrics, TwoBatchesMatchKerasAndReplicaStatesAddUp) {
  const json entry = cases().at(GetParam());
  const std::string kind = entry.at("data");
  SCOPED_TRACE(entry.at("metric").dump() + " on " + kind);
  const Tensor y_true = batch(kind, "true", 0), y_pred = batch(kind, "pred", 0);
  std::unique_ptr<Metric> metric = get(entry.at("metric"), y_true.shape(), y_pred.shape());
  for (int b = 0; b < 2; ++b) metric->update_state(batch(kind, "true", b), batch(kind, "pred", b));
  const double expected = entry.at("result").get<double>();
  // Keras computes in float32.
  EXPECT_NEAR(metric->result(), expected, 2e-6 * std::abs(expected) + 1e-7);

  // Two replicas, one batch each, their states summed.
  std::unique_ptr<Metric> first = get(entry.at("metric"), y_true.shape(), y_pred.shape());
  std::unique_ptr<Metric> second = get(entry.at("metric"), y_true.shape(), y_pred.shape());
  first->update_state(batch(kind, "true", 0), batch(kind, "pred", 0));
  second->update_state(batch(kind, "true", 1), batch(kind, "pred", 1));
  std::vector<double> sum = first->state();
  for (size_t i = 0; i < sum.size(); ++i) sum[i] += second->state()[i];
  first->set_state(sum);
  EXPECT_DOUBLE_EQ(first->result(), metric->result());
  first->reset_state();
  EXPECT_EQ(first->result(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, KerasMetrics, ::testing::Range(size_t(0), cases().size()));

TEST(Metrics, NamesAsKerasReportsThem) {
  const Shape labels{4}, probabilities{4, 3};
  EXPECT_EQ(get("mae", labels, probabilities)->name(), "mae");
  EXPECT_EQ(get("AUC", labels, probabilities)->name(), "AUC");
  EXPECT_EQ(get(json{{"class_name", "AUC"}, {"config", {{"name", "auc_1"}, {"curve", "PR"}}}}, labels, probabilities)->name(),
            "auc_1");
  EXPECT_EQ(get("accuracy", labels, probabilities, "digit_accuracy")->name(), "digit_accuracy");
}

TEST(Metrics, UnsupportedMetricsAndArgumentsAreRefusedByName) {
  const Shape onehot{4, 3};
  struct Refusal {
    json metric;
    std::string message;
  };
  const std::vector<Refusal> refusals = {
      {"mean_io_u", "metric 'mean_io_u' is not supported"},
      {json{{"class_name", "F1Score"}, {"config", json::object()}}, "average null is not supported"},
      {json{{"class_name", "AUC"}, {"config", {{"multi_label", true}}}}, "multi_label true is not supported"},
      {json{{"class_name", "AUC"}, {"config", {{"curve", "PRGAIN"}}}}, "curve 'PRGAIN' is not supported"},
      {json{{"class_name", "Precision"}, {"config", {{"top_k", 2}}}}, "top_k 2 is not supported"},
      {json{{"class_name", "Recall"}, {"config", {{"thresholds", {0.3, 0.6}}}}}, "Tenfold takes one threshold"},
      {json{{"class_name", "AUC"}, {"config", {{"nonsense", 1}}}}, "nonsense 1 is not a setting Tenfold knows"},
      {json{{"class_name", "Mean"}, {"module", "my_project"}}, "is not a Keras built-in"},
      {json{{"class_name", "Accuracy"}, {"config", json::object()}}, "metric class 'Accuracy' (exact equality"},
      {json{{"class_name", "BinaryCrossentropy"}, {"config", {{"from_logits", true}}}}, "from_logits true is not supported"},
  };
  for (const Refusal& refusal : refusals) {
    const std::string error = testing::error_of([&] { get(refusal.metric, onehot, onehot); });
    EXPECT_NE(error.find(refusal.message), std::string::npos) << refusal.metric.dump() << ": " << error;
  }
  // Keras' serialized loss metrics at their defaults load.
  EXPECT_EQ(get(json{{"class_name", "BinaryCrossentropy"},
                     {"config", {{"name", "bce"}, {"dtype", "float32"}, {"from_logits", false}, {"label_smoothing", 0}}}},
                onehot, onehot)->name(), "bce");
  EXPECT_EQ(get(json{{"class_name", "SparseCategoricalCrossentropy"}, {"config", {{"from_logits", false}, {"axis", -1}}}},
                Shape{4}, onehot)->name(), "SparseCategoricalCrossentropy");
  // One-hot top-k on integer labels: a clear error, not a read past the labels.
  std::unique_ptr<Metric> top_k = get("top_k_categorical_accuracy", Shape{4}, onehot);
  const std::string error = testing::error_of([&] { top_k->update_state(Tensor(Shape{4}), Tensor(onehot)); });
  EXPECT_NE(error.find("for integer labels use sparse_top_k_categorical_accuracy"), std::string::npos) << error;
}

TEST(Metrics, AccuraciesCountEveryPositionOfSequenceOutputs) {
  // Predictions [batch 2, steps 3, classes 4]: all 6 rows count, as Keras flattens them.
  Tensor pred(Shape{2, 3, 4}), labels(Shape{2, 3}, DType::int32);
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t c = 0; c < 4; ++c) pred.data<float>()[r * 4 + c] = c == r % 4 ? 1.0f : 0.1f * float(c);
    labels.data<int32_t>()[r] = int32_t(r < 3 ? r % 4 : (r % 4 + 1) % 4);  // rows 0-2 right, 3-5 wrong
  }
  auto top_1 = get(json{{"class_name", "SparseTopKCategoricalAccuracy"}, {"config", {{"k", 1}}}}, labels.shape(), pred.shape());
  auto accuracy = get("sparse_categorical_accuracy", labels.shape(), pred.shape());
  top_1->update_state(labels, pred);
  accuracy->update_state(labels, pred);
  EXPECT_DOUBLE_EQ(top_1->result(), 3.0 / 6.0);
  EXPECT_DOUBLE_EQ(accuracy->result(), 3.0 / 6.0);
  EXPECT_EQ(top_1->state()[1], 6.0);
}

}  // namespace
}  // namespace tenfold::metrics
