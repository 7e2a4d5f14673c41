// Each layer's forward and backward against PyTorch-computed values (tests/fixtures/torch,
// written by tools/make_torch_fixtures.py).
#include <gtest/gtest.h>

#include <fstream>

#include "layers/registry.h"
#include "support/check.h"
#include "support/npy.h"

namespace tenfold {
namespace {

using nlohmann::json;
using testing::all_close;
using testing::fixture_path;
using testing::read_npy;

constexpr double rtol = 1e-4, atol = 1e-5;

std::vector<json> layer_cases() {
  std::ifstream file(fixture_path("torch/cases.json"));
  json cases = json::parse(file);
  std::vector<json> result;
  for (const json& each : cases.at("cases")) {
    if (each.at("kind") != "loss") result.push_back(each);
  }
  return result;
}

json layer_config(const json& c) {
  std::string kind = c.at("kind");
  if (kind == "conv2d") {
    return {{"class_name", "Conv2D"},
            {"config", {{"filters", c["filters"]}, {"kernel_size", c["kernel_size"]},
                        {"strides", c["strides"]}, {"padding", c["padding"]},
                        {"activation", c["activation"]}}}};
  }
  if (kind == "max_pooling2d" || kind == "average_pooling2d") {
    return {{"class_name", kind == "max_pooling2d" ? "MaxPooling2D" : "AveragePooling2D"},
            {"config", {{"pool_size", c["pool_size"]}, {"strides", c["strides"]},
                        {"padding", c["padding"]}}}};
  }
  if (kind == "dense") {
    return {{"class_name", "Dense"},
            {"config", {{"units", c["units"]}, {"activation", c["activation"]}}}};
  }
  return {{"class_name", "Activation"}, {"config", {{"activation", c["activation"]}}}};
}

class LayerVsTorch : public ::testing::TestWithParam<json> {};

TEST_P(LayerVsTorch, ForwardAndBackwardMatch) {
  const json& c = GetParam();
  std::string directory = "torch/" + c.at("name").get<std::string>() + "/";
  auto load = [&](const std::string& name) { return read_npy(fixture_path(directory + name + ".npy")); };
  Tensor x = load("x"), y = load("y"), dy = load("dy"), dx = load("dx");
  auto layer = layers::from_config(layer_config(c));
  Random random(1);
  layer->build(x.shape(), random);
  std::vector<Variable*> weights = layer->weights();
  if (!weights.empty()) {
    weights[0]->assign(load("kernel"));
    weights[1]->assign(load("bias"));
  }
  ASSERT_EQ(layer->compute_output_shape(x.shape()), y.shape());

  auto step = layer->compile(x.shape(), {});
  Tensor output(y.shape()), grad_input(x.shape()), grad_output = dy.clone();
  step->forward(x, output, true);
  EXPECT_TRUE(all_close(output, y, rtol, atol)) << "forward";
  std::vector<Tensor> weight_gradients;
  for (Variable* weight : weights) weight_gradients.emplace_back(weight->value().shape());
  step->backward(x, output, grad_output, &grad_input, weight_gradients, false);
  EXPECT_TRUE(all_close(grad_input, dx, rtol, atol)) << "input gradient";
  if (!weights.empty()) {
    EXPECT_TRUE(all_close(weights[0]->to_keras_layout(weight_gradients[0]), load("dkernel"), rtol, 1e-4))
        << "kernel gradient";
    EXPECT_TRUE(all_close(weight_gradients[1], load("dbias"), rtol, 1e-4)) << "bias gradient";
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LayerVsTorch, ::testing::ValuesIn(layer_cases()),
                         [](const ::testing::TestParamInfo<json>& param_info) {
                           return param_info.param.at("name").get<std::string>();
                         });

}  // namespace
}  // namespace tenfold
