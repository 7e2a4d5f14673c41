#include "support/layer_test.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "layers/dtype_policy.h"
#include "layers/input.h"
#include "layers/registry.h"
#include "losses/elementwise.h"
#include "models/sequential.h"
#include "optimizers/sgd.h"
#include "support/check.h"

namespace tenfold::testing {

std::vector<DType> compute_dtypes_here() {
  if (cpu_has_bfloat16_units()) return {DType::float32, DType::bfloat16};
  return {DType::float32};
}

void run_layer_test(const nlohmann::json& config, const Shape& input_shape,
                    const Shape& expected_output_shape, int64_t expected_params) {
  SCOPED_TRACE(config.dump());
  auto layer = layers::from_config(config);
  Random random(5);
  layer->build(input_shape, random);
  EXPECT_EQ(layer->compute_output_shape(input_shape), expected_output_shape);
  EXPECT_EQ(layer->count_params(), expected_params);

  // The config round trip: rebuilding from get_config() gives the same config.
  nlohmann::json saved = layers::to_config(*layer);
  auto rebuilt = layers::from_config(saved);
  EXPECT_EQ(rebuilt->get_config(), layer->get_config());
  EXPECT_EQ(rebuilt->class_name(), layer->class_name());

  // Training steps in a model: the loss goes down when there is something to learn.
  models::Sequential model({layers::Input(input_shape.without_batch()), layers::from_config(config)});
  model.compile(std::make_shared<optimizers::SGD>(0.05f), std::make_shared<losses::MeanSquaredError>());
  auto x_values = random_values(size_t(input_shape.num_elements()), 1);
  auto y_values = random_values(size_t(expected_output_shape.num_elements()), 2, 0, 1);
  Tensor x(input_shape), y(expected_output_shape);
  std::copy(x_values.begin(), x_values.end(), x.data<float>());
  std::copy(y_values.begin(), y_values.end(), y.data<float>());
  models::FitOptions options;
  options.batch_size = input_shape[0];
  options.epochs = 5;
  options.verbose = 0;
  auto history = model.fit(x, y, options);
  const auto& losses = history.history.at("loss");
  for (double loss : losses) EXPECT_TRUE(std::isfinite(loss));
  if (!layer->trainable_weights().empty()) {
    EXPECT_LT(losses.back(), losses.front());
  }
}

void expect_weight_gradients_match_finite_differences(models::CompiledStep& step,
                                                      const std::vector<Variable*>& weights,
                                                      const losses::Loss& loss, const Tensor& y,
                                                      bool training, double h) {
  const double batch = double(step.batch_size());
  for (size_t w = 0; w < weights.size(); ++w) {
    Tensor analytic = weights[w]->to_keras_layout(step.weight_gradients()[w]);
    Tensor value = weights[w]->read();
    std::vector<double> point(value.values<float>().begin(), value.values<float>().end());
    auto mean_loss = [&](const std::vector<double>& p) {
      Tensor changed(value.shape());
      for (size_t i = 0; i < p.size(); ++i) changed.data<float>()[i] = float(p[i]);
      weights[w]->assign(changed);
      step.forward(training);
      return step.compute_loss(loss, y, batch, nullptr) / batch;
    };
    std::vector<double> numeric = numerical_gradient(mean_loss, point, h);
    weights[w]->assign(value);
    EXPECT_TRUE(all_close(analytic.values<float>(), numeric, 2e-2, 1e-3)) << weights[w]->name() << " of weight " << w;
  }
}

void expect_model_gradients_match_finite_differences(models::Model& model, int64_t batch, int64_t classes,
                                                     const Tensor& x) {
  model.compile(std::make_shared<optimizers::SGD>(0.1f), losses::get("sparse_categorical_crossentropy"));
  models::CompiledStep& step = model.compiled_step(batch, true);
  const Tensor input = x.empty() ? random_tensor(model.input_shape().with_leading(batch), 2) : x;
  std::memcpy(step.input().raw_data(), input.raw_data(), input.num_bytes());
  const Tensor y = random_labels(batch, classes, 5);
  const auto loss = losses::get("sparse_categorical_crossentropy");
  step.forward(true);
  step.backward(*loss, y, double(batch));
  expect_weight_gradients_match_finite_differences(step, model.trainable_weights(), *loss, y, true, 1e-3);
}

}  // namespace tenfold::testing
