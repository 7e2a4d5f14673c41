// Optimizer updates against Keras' update rules, written out in double precision for a few
// steps, and against Keras' own apply_gradients (tools/make_optimizer_fixtures.py), on a
// variable whose native layout is Keras' own. (The Keras-computed end to end check is
// models/test_keras_parity.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "optimizers/adam.h"
#include "optimizers/nadam.h"
#include "optimizers/rmsprop.h"
#include "optimizers/sgd.h"
#include "support/check.h"
#include "support/npy.h"

namespace tenfold::optimizers {
namespace {

using testing::random_values;

struct Trajectory {
  std::vector<double> initial;
  std::vector<std::vector<double>> gradients;
};

Trajectory make_run(size_t count, int steps) {
  Trajectory run{random_values(count, 1), {}};
  for (int s = 0; s < steps; ++s) run.gradients.push_back(random_values(count, 10 + uint64_t(s)));
  return run;
}

std::vector<float> apply(Optimizer& optimizer, const Trajectory& run) {
  Variable variable("w", Shape{int64_t(run.initial.size())}, nullptr);
  std::copy(run.initial.begin(), run.initial.end(), variable.value().data<float>());
  optimizer.build({&variable});
  for (const auto& gradient : run.gradients) {
    std::vector<Tensor> gradients = {Tensor(Shape{int64_t(gradient.size())})};
    std::copy(gradient.begin(), gradient.end(), gradients[0].data<float>());
    optimizer.apply_gradients(gradients);
  }
  EXPECT_EQ(optimizer.iterations(), int64_t(run.gradients.size()));
  auto values = variable.value().values<float>();
  return std::vector<float>(values.begin(), values.end());
}

// Every optimizer Keras serialized, rebuilt from its config, 3 updates of w (4, 3). On a
// bfloat16 variable Keras rounds after every operation; Tenfold does the same operations in the
// same order, so the results are equal to the bit.
class KerasOptimizers : public ::testing::TestWithParam<size_t> {
 public:
  static nlohmann::json cases() {
    std::ifstream file(testing::fixture_path("keras/optimizers/cases.json"));
    return nlohmann::json::parse(file);
  }
};

TEST_P(KerasOptimizers, ThreeUpdatesMatchKeras) {
  const nlohmann::json entry = cases().at(GetParam());
  const std::string name = entry.at("case");
  SCOPED_TRACE(name);
  auto npy = [](const std::string& file) { return testing::read_npy(testing::fixture_path("keras/optimizers/" + file + ".npy")); };
  std::shared_ptr<Optimizer> optimizer = from_config(entry.at("config"));
  Variable variable("w", Shape{4, 3}, nullptr);
  const bool bfloat16 = entry.at("variable_dtype") == "bfloat16";
  if (bfloat16) variable.set_dtype(DType::bfloat16);
  variable.assign(npy("w0"));
  optimizer->build({&variable});
  const std::string accumulator = testing::fixture_path("keras/optimizers/" + name + "_accumulator.npy");
  for (const char* gradient : {"g0", "g1", "g2"}) {
    std::vector<Tensor> gradients = {npy(gradient)};
    optimizer->apply_gradients(gradients);
    if (optimizer->iterations() == 2 && std::filesystem::exists(accumulator)) {
      EXPECT_TRUE(testing::all_close(*optimizer->keras_variables().at(0).value, testing::read_npy(accumulator), 0, 0))
          << "the gradient accumulator";
    }
  }
  if (bfloat16) {
    EXPECT_TRUE(testing::all_close(variable.read(), npy(name), 0, 0));
  } else {
    EXPECT_TRUE(testing::all_close(variable.read(), npy(name), 1e-5, 1e-6));
  }
  // Its config reads back to the same optimizer.
  EXPECT_EQ(from_config({{"class_name", optimizer->class_name()}, {"config", optimizer->get_config()}})->get_config(),
            optimizer->get_config());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, KerasOptimizers, ::testing::Range(size_t(0), KerasOptimizers::cases().size()));

/// An optimizer written without Keras' bfloat16 arithmetic.
class PlainDescent : public Optimizer {
 public:
  PlainDescent() : Optimizer(0.1f) {}
  std::string class_name() const override { return "PlainDescent"; }
  std::vector<std::vector<std::string>> slot_groups() const override { return {}; }

 protected:
  void update(float* value, const float* gradient, std::span<float* const>, int64_t count) override {
    for (int64_t i = 0; i < count; ++i) value[i] -= 0.1f * gradient[i];
  }
};

TEST(Optimizers, ABetaThatIsOneInBfloat16IsRefusedOnBfloat16Variables) {
  // With their default beta_2 (0.999, which is 1.0 in bfloat16) Keras' Adam leaves a bfloat16
  // variable as it was (its step size is 0) and its Nadam makes it NaN (v / (1 - beta_2^t) is
  // 0 / 0). Tenfold refuses to update rather than train nothing (building is fine: a loaded
  // model still predicts).
  auto npy = [](const std::string& file) { return testing::read_npy(testing::fixture_path("keras/optimizers/" + file + ".npy")); };
  Variable variable("w", Shape{4, 3}, nullptr);
  variable.set_dtype(DType::bfloat16);
  variable.assign(npy("w0"));
  EXPECT_TRUE(testing::all_close(variable.read(), npy("adam_default_bfloat16"), 0, 0));
  const Tensor keras_nadam = npy("nadam_default_bfloat16");
  for (float keras : keras_nadam.values<float>()) EXPECT_TRUE(std::isnan(keras));
  auto update_error = [&](Optimizer& optimizer) {
    optimizer.build({&variable});
    std::vector<Tensor> gradients = {npy("g0")};
    return testing::error_of([&] { optimizer.apply_gradients(gradients); });
  };
  const std::string refused = "under the bfloat16 policy (weight 'w' is bfloat16): ";
  Adam adam;
  AdamW adamw;
  Nadam nadam;
  EXPECT_NE(update_error(adam).find(refused + "Adam's beta_2 = 0.999 is 1.0 in bfloat16, so Keras' Adam makes no update at all"),
            std::string::npos);
  EXPECT_NE(update_error(adamw).find(refused + "AdamW's beta_2 = 0.999 is 1.0 in bfloat16, so Keras' AdamW makes no update"),
            std::string::npos);
  EXPECT_NE(update_error(nadam).find(refused + "Nadam's beta_2 = 0.999 is 1.0 in bfloat16, so Keras' Nadam turns every "
                                               "weight into NaN"),
            std::string::npos);
  // An optimizer without Keras' bfloat16 arithmetic, and clipping, are refused too.
  PlainDescent plain;
  EXPECT_NE(update_error(plain).find("PlainDescent does not update bfloat16 variables yet"), std::string::npos);
  SGD clipped;
  clipped.set_gradient_options({.clipnorm = 1});
  EXPECT_NE(update_error(clipped).find("clipnorm, global_clipnorm and clipvalue are not supported yet"), std::string::npos);
  EXPECT_TRUE(testing::all_close(variable.read(), npy("adam_default_bfloat16"), 0, 0));  // untouched
  // On a float32 variable they all update.
  variable.set_dtype(DType::float32);
  for (Optimizer* optimizer : std::initializer_list<Optimizer*>{&adam, &nadam, &plain}) {
    EXPECT_EQ(update_error(*optimizer), "(no error)") << optimizer->class_name();
  }
}

TEST(Optimizers, OneClipAtATimeAsKeras) {
  EXPECT_NE(testing::error_of([] { SGD().set_gradient_options({.clipnorm = 1, .clipvalue = 1}); })
                .find("only one of clipnorm, global_clipnorm and clipvalue"), std::string::npos);
}

TEST(Adam, FollowsKerasUpdate) {
  Trajectory run = make_run(50, 4);
  Adam adam(0.01f);
  std::vector<float> actual = apply(adam, run);
  std::vector<double> w = run.initial, m(w.size()), v(w.size());
  for (size_t t = 1; t <= run.gradients.size(); ++t) {
    double alpha = 0.01 * std::sqrt(1 - std::pow(0.999, double(t))) / (1 - std::pow(0.9, double(t)));
    for (size_t i = 0; i < w.size(); ++i) {
      double g = run.gradients[t - 1][i];
      m[i] += (g - m[i]) * 0.1;
      v[i] += (g * g - v[i]) * 0.001;
      w[i] -= alpha * m[i] / (std::sqrt(v[i]) + 1e-7);
    }
  }
  EXPECT_TRUE(testing::all_close(actual, w, 1e-5, 1e-6));
}

TEST(SGD, PlainMomentumAndNesterov) {
  Trajectory run = make_run(40, 3);
  for (float momentum : {0.0f, 0.9f}) {
    for (bool nesterov : {false, true}) {
      SGD sgd(0.1f, momentum, nesterov);
      std::vector<float> actual = apply(sgd, run);
      std::vector<double> w = run.initial, velocity(w.size());
      for (const auto& gradient : run.gradients) {
        for (size_t i = 0; i < w.size(); ++i) {
          double g = gradient[i];
          if (momentum == 0.0f) {
            w[i] -= 0.1 * g;
            continue;
          }
          velocity[i] = 0.9 * velocity[i] - 0.1 * g;
          w[i] += nesterov ? 0.9 * velocity[i] - 0.1 * g : velocity[i];
        }
      }
      EXPECT_TRUE(testing::all_close(actual, w, 1e-5, 1e-6)) << momentum << " " << nesterov;
    }
  }
}

TEST(RMSprop, FollowsKerasUpdate) {
  Trajectory run = make_run(30, 3);
  RMSprop rmsprop(0.01f);
  std::vector<float> actual = apply(rmsprop, run);
  std::vector<double> w = run.initial, velocity(w.size());
  for (const auto& gradient : run.gradients) {
    for (size_t i = 0; i < w.size(); ++i) {
      velocity[i] = 0.9 * velocity[i] + 0.1 * gradient[i] * gradient[i];
      w[i] -= 0.01 * gradient[i] / std::sqrt(velocity[i] + 1e-7);
    }
  }
  EXPECT_TRUE(testing::all_close(actual, w, 1e-4, 1e-6));
}

// Each of Keras' schedules, from its serialized config, at steps before, on and after its
// boundaries, restarts and warmup, against Keras' own values.
TEST(LearningRateSchedules, MatchKerasAtEveryStep) {
  std::ifstream file(testing::fixture_path("keras/optimizers/schedules.json"));
  const nlohmann::json schedules = nlohmann::json::parse(file);
  ASSERT_EQ(schedules.size(), 11u);
  for (const nlohmann::json& entry : schedules) {
    std::shared_ptr<const LearningRateSchedule> schedule = schedule_from_config(entry.at("config"));
    SCOPED_TRACE(entry.at("config").dump());
    for (size_t i = 0; i < entry.at("steps").size(); ++i) {
      const double expected = entry.at("values")[i].get<double>();
      // Keras computes in float32 (pow over 100 decay periods: 2e-6 relative).
      EXPECT_NEAR((*schedule)(entry.at("steps")[i].get<int64_t>()), expected, 1e-5 * std::abs(expected) + 1e-9)
          << "step " << entry.at("steps")[i];
    }
    // Its serialization reads back to the same schedule.
    EXPECT_EQ(schedule_from_config(serialize(*schedule))->get_config(), schedule->get_config());
  }
}

TEST(LearningRateSchedules, AScheduledLearningRateCannotBeSet) {
  std::shared_ptr<Optimizer> sgd = from_config(
      {{"class_name", "SGD"},
       {"config", {{"learning_rate", {{"class_name", "ExponentialDecay"},
                                      {"config", {{"initial_learning_rate", 0.1}, {"decay_steps", 10}, {"decay_rate", 0.5}}}}}}}});
  EXPECT_FLOAT_EQ(sgd->learning_rate(), 0.1f);
  EXPECT_NE(testing::error_of([&] { sgd->set_learning_rate(0.5f); }).find("ExponentialDecay schedule and cannot be set"),
            std::string::npos);
}

// Every key Keras writes is read with its meaning or refused by name.
TEST(Optimizers, UnsupportedConfigKeysAreRefusedByName) {
  struct Refusal {
    nlohmann::json optimizer;
    std::string message;
  };
  const nlohmann::json decay = {{"class_name", "ExponentialDecay"},
                                {"config", {{"initial_learning_rate", 0.1}, {"decay_steps", 10}, {"decay_rate", 0.5}}}};
  const std::vector<Refusal> refusals = {
      {{{"class_name", "Adam"}, {"config", {{"beta_3", 0.5}}}}, "Adam: beta_3 0.5 is not a setting Tenfold knows"},
      {{{"class_name", "SGD"}, {"config", {{"use_ema", true}}}}, "SGD: use_ema true is not supported"},
      {{{"class_name", "SGD"}, {"config", {{"loss_scale_factor", 128.0}}}}, "SGD: loss_scale_factor 128.0 is not supported"},
      {{{"class_name", "RMSprop"}, {"config", {{"decay", 0.01}}}}, "RMSprop: decay 0.01 is not supported"},
      {{{"class_name", "Adam"}, {"config", {{"gradient_accumulation_steps", 1}}}}, "gradient_accumulation_steps must be an integer >= 2"},
      {{{"class_name", "Ftrl"}, {"config", nlohmann::json::object()}}, "optimizer 'Ftrl' is not supported"},
      {{{"class_name", "SGD"}, {"config", {{"learning_rate", {{"class_name", "MySchedule"}, {"module", "my_module"}}}}}},
       "from module \"my_module\" is not a Keras built-in"},
      {{{"class_name", "SGD"}, {"config", {{"learning_rate", {{"class_name", "OneCycle"}, {"config", nlohmann::json::object()}}}}}},
       "learning rate schedule 'OneCycle' is not supported"},
      {{{"class_name", "SGD"},
        {"config", {{"learning_rate", {{"class_name", "ExponentialDecay"}, {"config", {{"initial_learning_rate", 0.1}, {"decay_steps", 10}, {"decay_rate", 0.5}, {"warmup", 3}}}}}}}},
       "ExponentialDecay: warmup 3 is not a setting Tenfold knows"},
      {{{"class_name", "SGD"},
        {"config", {{"learning_rate", {{"class_name", "CosineDecay"}, {"config", {{"initial_learning_rate", 0.1}, {"decay_steps", 0}}}}}}}},
       "decay_steps must be positive"},
      {{{"class_name", "SGD"},
        {"config", {{"learning_rate", {{"class_name", "PiecewiseConstantDecay"}, {"config", {{"boundaries", {1, 2}}, {"values", {1.0, 0.5}}}}}}}}},
       "needs one more value than boundaries"},
  };
  for (const Refusal& refusal : refusals) {
    const std::string error = testing::error_of([&] { from_config(refusal.optimizer); });
    EXPECT_NE(error.find(refusal.message), std::string::npos) << refusal.optimizer.dump() << ": " << error;
  }
  // What Keras 2 and 3 write at values that mean what Tenfold computes loads.
  EXPECT_NO_THROW(from_config({{"class_name", "Adam"},
                               {"config", {{"name", "adam"}, {"learning_rate", decay}, {"use_ema", false}, {"ema_momentum", 0.99},
                                           {"ema_overwrite_frequency", nullptr}, {"loss_scale_factor", nullptr},
                                           {"decay", 0.0}, {"jit_compile", true}, {"is_legacy_optimizer", false}}}}));
}

TEST(Optimizers, KerasDefaults) {
  EXPECT_EQ(Adam().get_config()["learning_rate"], 0.001f);
  EXPECT_EQ(Adam().get_config()["epsilon"], 1e-7f);
  EXPECT_EQ(SGD().get_config()["learning_rate"], 0.01f);
  EXPECT_EQ(RMSprop().get_config()["rho"], 0.9f);
  EXPECT_EQ(get("adam")->class_name(), "Adam");
  EXPECT_EQ(get("nadam")->class_name(), "Nadam");
  EXPECT_EQ(get("adadelta")->get_config()["rho"], 0.95f);
}

}  // namespace
}  // namespace tenfold::optimizers
