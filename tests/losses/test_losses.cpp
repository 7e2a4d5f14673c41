// Losses against PyTorch-computed values and gradients (tests/fixtures/torch), Keras' own
// (tests/fixtures/keras/losses), and central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "core/error.h"
#include "losses/crossentropy.h"
#include "losses/elementwise.h"
#include "support/check.h"
#include "support/npy.h"

namespace tenfold::losses {
namespace {

using nlohmann::json;
using testing::all_close;
using testing::fixture_path;
using testing::read_npy;

std::vector<json> loss_cases() {
  std::ifstream file(fixture_path("torch/cases.json"));
  json cases = json::parse(file);
  std::vector<json> result;
  for (const json& each : cases.at("cases")) {
    if (each.at("kind") == "loss") result.push_back(each);
  }
  return result;
}

std::shared_ptr<Loss> make_loss(const json& c) {
  bool from_logits = c.at("from_logits");
  if (c.at("loss") == "sparse_categorical_crossentropy") {
    return std::make_shared<SparseCategoricalCrossentropy>(from_logits);
  }
  if (c.at("loss") == "categorical_crossentropy") {
    return std::make_shared<CategoricalCrossentropy>(from_logits);
  }
  return std::make_shared<MeanSquaredError>();
}

class LossVsTorch : public ::testing::TestWithParam<json> {};

TEST_P(LossVsTorch, ValueAndGradientMatch) {
  const json& c = GetParam();
  std::string directory = "torch/" + c.at("name").get<std::string>() + "/";
  auto load = [&](const std::string& name) { return read_npy(fixture_path(directory + name + ".npy")); };
  Tensor y_pred = load("y_pred"), y_true = load("y_true");
  double expected = load("loss").data<float>()[0];
  auto loss = make_loss(c);
  double batch = double(y_pred.shape()[0]);
  Tensor gradient(y_pred.shape());
  double sum = loss->compute(y_pred, y_true, false, batch, &gradient);
  EXPECT_NEAR(sum / batch, expected, 1e-5 * std::fabs(expected) + 1e-6);
  EXPECT_TRUE(all_close(gradient, load("dy_pred"), 1e-4, 1e-6));

  // Central differences on the float inputs (the loss sums in double). Small probabilities get
  // smaller steps, so no step crosses the clipping bound at 1e-7.
  bool probabilities = c.at("loss") != "mean_squared_error" && !c.at("from_logits").get<bool>();
  std::vector<double> numeric(size_t(y_pred.num_elements()));
  for (size_t i = 0; i < numeric.size(); ++i) {
    Tensor shifted = y_pred.clone();
    float original = y_pred.data<float>()[i];
    double step = probabilities ? std::min(1e-3, double(original) / 100) : 1e-3;
    shifted.data<float>()[i] = float(original + step);
    double plus = loss->compute(shifted, y_true, false, batch, nullptr);
    shifted.data<float>()[i] = float(original - step);
    double minus = loss->compute(shifted, y_true, false, batch, nullptr);
    double actual_step = double(float(original + step)) - double(float(original - step));
    numeric[i] = (plus - minus) / actual_step / batch;
  }
  EXPECT_TRUE(all_close(gradient.values<float>(), numeric, 2e-3, 2e-5));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LossVsTorch, ::testing::ValuesIn(loss_cases()),
                         [](const ::testing::TestParamInfo<json>& param_info) {
                           return param_info.param.at("name").get<std::string>();
                         });

TEST(SparseCategoricalCrossentropy, ClipsProbabilitiesLikeKeras) {
  // A zero probability for the true class: Keras clips to 1e-7, giving -log(1e-7 / sum).
  Tensor y_pred(Shape{1, 2}), y_true(Shape{1}, DType::int32);
  y_pred.data<float>()[1] = 1.0f;
  double loss = SparseCategoricalCrossentropy().compute(y_pred, y_true, false, 1, nullptr);
  EXPECT_NEAR(loss, -std::log(1e-7 / (1e-7 + (1 - 1e-7))), 1e-3);
}

TEST(SparseCategoricalCrossentropy, FromLogitsIsStableForLargeLogits) {
  Tensor logits(Shape{1, 3}), y_true(Shape{1}, DType::int32);
  logits.data<float>()[0] = 1000.0f;
  logits.data<float>()[1] = -1000.0f;
  y_true.data<int32_t>()[0] = 1;
  Tensor gradient(Shape{1, 3});
  double loss = SparseCategoricalCrossentropy(true).compute(logits, y_true, false, 1, &gradient);
  EXPECT_NEAR(loss, 2000.0, 1e-3);
  EXPECT_NEAR(gradient.data<float>()[0], 1.0f, 1e-6);
  EXPECT_NEAR(gradient.data<float>()[1], -1.0f, 1e-6);
}

TEST(SparseCategoricalCrossentropy, RejectsLabelsOutsideTheClasses) {
  Tensor y_pred(Shape{2, 3}), y_true(Shape{2}, DType::int32);
  y_true.data<int32_t>()[1] = 3;
  try {
    SparseCategoricalCrossentropy().compute(y_pred, y_true, false, 2, nullptr);
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("label 3 at row 1 is outside [0, 3)"), std::string::npos);
  }
}

TEST(Losses, ResolveKerasNames) {
  EXPECT_EQ(get("sparse_categorical_crossentropy")->class_name(), "SparseCategoricalCrossentropy");
  EXPECT_EQ(get("mse")->class_name(), "MeanSquaredError");
  EXPECT_EQ(get("kld")->class_name(), "KLDivergence");
  EXPECT_EQ(get("huber")->class_name(), "Huber");
  EXPECT_NE(testing::error_of([] { get("ctc"); }).find("loss 'ctc' is not supported; use one of"), std::string::npos);
}

// Keras' own losses (tools/make_loss_fixtures.py): each built from the config Keras
// serializes (plus the constructor arguments Keras leaves out of it, e.g. Huber's delta),
// value and gradient within rtol 1e-5 of Keras' float32 ones.
class KerasLosses : public ::testing::TestWithParam<size_t> {
 public:
  static nlohmann::json cases() {
    std::ifstream file(testing::fixture_path("keras/losses/cases.json"));
    return nlohmann::json::parse(file);
  }
};

TEST_P(KerasLosses, ValueAndGradientMatchKeras) {
  const nlohmann::json entry = cases().at(GetParam());
  const std::string name = entry.at("case");
  SCOPED_TRACE(name);
  nlohmann::json config = entry.at("config");
  const nlohmann::json args = entry.value("args", nlohmann::json::object());
  for (const auto& [key, value] : args.items()) config["config"][key] = value;
  std::shared_ptr<Loss> loss = from_config(config);
  auto npy = [&](const std::string& part) { return testing::read_npy(testing::fixture_path("keras/losses/" + name + "_" + part + ".npy")); };
  Tensor y_pred = npy("pred"), y_true = npy("true");
  const double batch = double(y_pred.shape()[0]);
  Tensor gradient(y_pred.shape());
  const double sum = loss->compute(y_pred, y_true, false, batch, &gradient);
  const double expected = testing::read_npy_doubles(testing::fixture_path("keras/losses/" + name + "_loss.npy"))[0];
  EXPECT_NEAR(sum / batch, expected, 1e-5 * std::abs(expected));
  EXPECT_TRUE(testing::all_close(gradient, npy("grad"), 1e-5, 1e-7));
  // Tenfold's config of the loss reads back to the same loss.
  nlohmann::json written = {{"class_name", loss->class_name()}, {"config", loss->get_config()}};
  EXPECT_EQ(from_config(written)->get_config(), loss->get_config());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, KerasLosses, ::testing::Range(size_t(0), KerasLosses::cases().size()));

TEST(Losses, UnimplementedArgumentsAreRefusedByName) {
  auto error = [](const nlohmann::json& config) { return testing::error_of([&] { from_config(config); }); };
  EXPECT_NE(error({{"class_name", "MeanSquaredError"}, {"config", {{"reduction", "sum"}}}}).find("reduction \"sum\" is not supported"),
            std::string::npos);
  EXPECT_NE(error({{"class_name", "Huber"}, {"config", {{"delta", 1.0}, {"weights", 2}}}}).find("weights 2 is not a setting"),
            std::string::npos);
  EXPECT_NE(error({{"class_name", "CategoricalCrossentropy"}, {"config", {{"axis", 1}}}}).find("axis 1 is not supported"),
            std::string::npos);
  EXPECT_NE(error({{"class_name", "Poisson"}, {"config", {{"from_logits", true}}}}).find("Poisson takes neither from_logits"),
            std::string::npos);
}

}  // namespace
}  // namespace tenfold::losses
