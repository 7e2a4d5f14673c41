// Every built-in activation, and the activation layers as Keras configures them, against
// Keras' own values and gradients (tools/make_activation_fixtures.py): forward within rtol
// 1e-5, and the gradient of sum(y * w).
#include <gtest/gtest.h>

#include <fstream>

#include "layers/activation.h"
#include "layers/registry.h"
#include "support/check.h"
#include "support/npy.h"

namespace tenfold {
namespace {

using testing::fixture_path;
using testing::read_npy;

std::string fixture(const std::string& name) { return fixture_path("keras/activations/" + name + ".npy"); }

/// The layer's output on x and the gradient of sum(output * w), as one step computes them.
std::pair<Tensor, Tensor> run(Layer& layer) {
  const Tensor x = read_npy(fixture("x")), w = read_npy(fixture("w"));
  std::unique_ptr<LayerStep> step = layer.compile(x.shape(), CompileOptions{});
  Tensor y(x.shape()), gradient(x.shape()), upstream = w.clone();
  step->forward(x, y, true);
  step->backward(x, y, upstream, &gradient, {}, false);
  return {y, gradient};
}

class BuiltinActivations : public ::testing::TestWithParam<std::string> {};

TEST_P(BuiltinActivations, MatchKeras) {
  layers::Activation layer(GetParam());
  auto [y, gradient] = run(layer);
  EXPECT_TRUE(testing::all_close(y, read_npy(fixture("y_" + GetParam())), 1e-5, 1e-6)) << "forward";
  EXPECT_TRUE(testing::all_close(gradient, read_npy(fixture("g_" + GetParam())), 1e-5, 1e-6)) << "gradient";
}

INSTANTIATE_TEST_SUITE_P(Keras, BuiltinActivations,
                         ::testing::Values("relu", "relu6", "leaky_relu", "elu", "selu", "gelu",
                                           "silu", "swish", "mish", "softplus", "softsign",
                                           "sigmoid", "hard_sigmoid", "hard_silu", "hard_swish",
                                           "tanh", "exponential", "softmax", "log_softmax",
                                           "linear"));

TEST(ActivationLayers, KerasConfigsLoadAndMatchKeras) {
  std::ifstream file(fixture_path("keras/activations/layers.json"));
  const nlohmann::json configs = nlohmann::json::parse(file);
  ASSERT_EQ(configs.size(), 10u);
  for (size_t i = 0; i < configs.size(); ++i) {
    SCOPED_TRACE(configs[i].dump());
    std::shared_ptr<Layer> layer = layers::from_config(configs[i]);
    auto [y, gradient] = run(*layer);
    const std::string prefix = "layer_" + std::to_string(i);
    EXPECT_TRUE(testing::all_close(y, read_npy(fixture(prefix + "_y")), 1e-5, 1e-6)) << "forward";
    EXPECT_TRUE(testing::all_close(gradient, read_npy(fixture(prefix + "_g")), 1e-5, 1e-6)) << "gradient";
    // Keras' config back, as Keras wrote it (dtype written as Tenfold writes it).
    nlohmann::json expected = configs[i]["config"], written = layer->get_config();
    expected.erase("dtype");
    written.erase("dtype");
    EXPECT_EQ(written, expected);
  }
}

}  // namespace
}  // namespace tenfold
