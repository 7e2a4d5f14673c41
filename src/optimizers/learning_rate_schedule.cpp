#include "optimizers/learning_rate_schedule.h"

#include <cmath>
#include <numbers>
#include <vector>

#include "core/config_reader.h"
#include "core/error.h"

namespace tenfold::optimizers {
namespace {

using nlohmann::json;

/// Keras' decay_steps and first_decay_steps: positive.
double positive(ConfigReader& c, const std::string& key) {
  const double value = c.take_required<double>(key);
  check_argument(value > 0, "a learning rate schedule's " + key + " must be positive, got " + json(value).dump());
  return value;
}

/// initial * decay_rate^(step / decay_steps), the exponent floored with staircase.
class ExponentialDecay : public LearningRateSchedule {
 public:
  explicit ExponentialDecay(ConfigReader& c)
      : initial_(c.take_required<double>("initial_learning_rate")), steps_(positive(c, "decay_steps")),
        rate_(c.take_required<double>("decay_rate")), staircase_(c.take<bool>("staircase", false)) {}
  double operator()(int64_t step) const override {
    const double p = double(step) / steps_;
    return initial_ * std::pow(rate_, staircase_ ? std::floor(p) : p);
  }
  std::string class_name() const override { return "ExponentialDecay"; }
  json get_config() const override {
    return {{"initial_learning_rate", initial_}, {"decay_steps", steps_}, {"decay_rate", rate_},
            {"staircase", staircase_}, {"name", "ExponentialDecay"}};
  }

 private:
  double initial_, steps_, rate_;
  bool staircase_;
};

/// values[i] for boundaries[i - 1] < step <= boundaries[i].
class PiecewiseConstantDecay : public LearningRateSchedule {
 public:
  explicit PiecewiseConstantDecay(ConfigReader& c) : boundaries_(c.take_required<std::vector<double>>("boundaries")), values_(c.take_required<std::vector<double>>("values")) {
    check_argument(values_.size() == boundaries_.size() + 1,
                   "PiecewiseConstantDecay needs one more value than boundaries, got " +
                       std::to_string(boundaries_.size()) + " boundaries and " + std::to_string(values_.size()) + " values");
  }
  double operator()(int64_t step) const override {
    size_t i = 0;
    while (i < boundaries_.size() && double(step) > boundaries_[i]) ++i;
    return values_[i];
  }
  std::string class_name() const override { return "PiecewiseConstantDecay"; }
  json get_config() const override {
    return {{"boundaries", boundaries_}, {"values", values_}, {"name", "PiecewiseConstant"}};
  }

 private:
  std::vector<double> boundaries_, values_;
};

/// (initial - end) * (1 - step / decay_steps)^power + end, step capped at decay_steps, or with
/// cycle decay_steps stretched to the first multiple past step.
class PolynomialDecay : public LearningRateSchedule {
 public:
  explicit PolynomialDecay(ConfigReader& c)
      : initial_(c.take_required<double>("initial_learning_rate")), steps_(positive(c, "decay_steps")),
        end_(c.take<double>("end_learning_rate", 0.0001)), power_(c.take<double>("power", 1.0)), cycle_(c.take<bool>("cycle", false)) {}
  double operator()(int64_t step) const override {
    double s = double(step), steps = steps_;
    if (cycle_) {
      steps *= step == 0 ? 1.0 : std::ceil(s / steps_);
    } else {
      s = std::min(s, steps);
    }
    return (initial_ - end_) * std::pow(1 - s / steps, power_) + end_;
  }
  std::string class_name() const override { return "PolynomialDecay"; }
  json get_config() const override {
    return {{"initial_learning_rate", initial_}, {"decay_steps", steps_}, {"end_learning_rate", end_},
            {"power", power_}, {"cycle", cycle_}, {"name", "PolynomialDecay"}};
  }

 private:
  double initial_, steps_, end_, power_;
  bool cycle_;
};

/// initial / (1 + decay_rate * step / decay_steps), the ratio floored with staircase.
class InverseTimeDecay : public LearningRateSchedule {
 public:
  explicit InverseTimeDecay(ConfigReader& c)
      : initial_(c.take_required<double>("initial_learning_rate")), steps_(positive(c, "decay_steps")),
        rate_(c.take_required<double>("decay_rate")), staircase_(c.take<bool>("staircase", false)) {}
  double operator()(int64_t step) const override {
    const double p = double(step) / steps_;
    return initial_ / (1 + rate_ * (staircase_ ? std::floor(p) : p));
  }
  std::string class_name() const override { return "InverseTimeDecay"; }
  json get_config() const override {
    return {{"initial_learning_rate", initial_}, {"decay_steps", steps_}, {"decay_rate", rate_},
            {"staircase", staircase_}, {"name", "InverseTimeDecay"}};
  }

 private:
  double initial_, steps_, rate_;
  bool staircase_;
};

/// (1 - alpha) * (1 + cos(pi * fraction)) / 2 + alpha, the cosine both schedules decay by.
double cosine_decayed(double fraction, double alpha) {
  return (1 - alpha) * 0.5 * (1 + std::cos(std::numbers::pi * fraction)) + alpha;
}

/// With warmup_target: linear from initial to warmup_target over warmup_steps, then a cosine
/// from warmup_target to warmup_target * alpha over decay_steps; without: the cosine from
/// initial.
class CosineDecay : public LearningRateSchedule {
 public:
  explicit CosineDecay(ConfigReader& c)
      : initial_(c.take_required<double>("initial_learning_rate")), steps_(positive(c, "decay_steps")),
        alpha_(c.take<double>("alpha", 0.0)), warmup_target_(c.take_optional<double>("warmup_target")),
        warmup_steps_(c.take<double>("warmup_steps", 0.0)) {}
  double operator()(int64_t step) const override {
    double s = double(step);
    if (!warmup_target_) return initial_ * cosine_decayed(std::min(s, steps_) / steps_, alpha_);
    s = std::min(s, steps_ + warmup_steps_);
    if (s < warmup_steps_) return (*warmup_target_ - initial_) * (s / warmup_steps_) + initial_;
    return *warmup_target_ * cosine_decayed((s - warmup_steps_) / steps_, alpha_);
  }
  std::string class_name() const override { return "CosineDecay"; }
  json get_config() const override {
    return {{"initial_learning_rate", initial_}, {"decay_steps", steps_}, {"alpha", alpha_}, {"name", "CosineDecay"},
            {"warmup_target", json_or_null(warmup_target_)}, {"warmup_steps", warmup_steps_}};
  }

 private:
  double initial_, steps_, alpha_;
  std::optional<double> warmup_target_;
  double warmup_steps_;
};

/// SGDR: the cosine over first_decay_steps, restarted with periods t_mul times longer and peaks
/// m_mul times lower each time.
class CosineDecayRestarts : public LearningRateSchedule {
 public:
  explicit CosineDecayRestarts(ConfigReader& c)
      : initial_(c.take_required<double>("initial_learning_rate")), first_steps_(positive(c, "first_decay_steps")),
        t_mul_(c.take<double>("t_mul", 2.0)), m_mul_(c.take<double>("m_mul", 1.0)), alpha_(c.take<double>("alpha", 0.0)) {}
  double operator()(int64_t step) const override {
    double fraction = double(step) / first_steps_, restart;
    if (t_mul_ == 1.0) {
      restart = std::floor(fraction);
      fraction -= restart;
    } else {
      restart = std::floor(std::log(1 - fraction * (1 - t_mul_)) / std::log(t_mul_));
      const double periods_before = (1 - std::pow(t_mul_, restart)) / (1 - t_mul_);
      fraction = (fraction - periods_before) / std::pow(t_mul_, restart);
    }
    const double peak = std::pow(m_mul_, restart);
    return initial_ * ((1 - alpha_) * 0.5 * peak * (1 + std::cos(std::numbers::pi * fraction)) + alpha_);
  }
  std::string class_name() const override { return "CosineDecayRestarts"; }
  json get_config() const override {
    return {{"initial_learning_rate", initial_}, {"first_decay_steps", first_steps_}, {"t_mul", t_mul_},
            {"m_mul", m_mul_}, {"alpha", alpha_}, {"name", "SGDRDecay"}};
  }

 private:
  double initial_, first_steps_, t_mul_, m_mul_, alpha_;
};

template <typename Schedule>
std::shared_ptr<const LearningRateSchedule> make(const std::string& class_name, const json& config) {
  ConfigReader reader(class_name, config);
  reader.ignore("name");
  auto schedule = std::make_shared<const Schedule>(reader);
  reader.finish();
  return schedule;
}

}  // namespace

std::shared_ptr<const LearningRateSchedule> schedule_from_config(const json& schedule) {
  check_argument(schedule.is_object() && schedule.contains("class_name"),
                 "a learning rate schedule needs 'class_name', got " + schedule.dump().substr(0, 200));
  const std::string name = schedule.at("class_name").get<std::string>();
  ConfigReader::require_keras_module(schedule, "keras.optimizers.schedules", "learning rate schedule");
  const json config = schedule.value("config", json::object());
  if (name == "ExponentialDecay") return make<ExponentialDecay>(name, config);
  if (name == "PiecewiseConstantDecay") return make<PiecewiseConstantDecay>(name, config);
  if (name == "PolynomialDecay") return make<PolynomialDecay>(name, config);
  if (name == "InverseTimeDecay") return make<InverseTimeDecay>(name, config);
  if (name == "CosineDecay") return make<CosineDecay>(name, config);
  if (name == "CosineDecayRestarts") return make<CosineDecayRestarts>(name, config);
  throw Error(ErrorCode::invalid_argument,
              "learning rate schedule '" + name + "' is not supported; use ExponentialDecay, PiecewiseConstantDecay, "
              "PolynomialDecay, InverseTimeDecay, CosineDecay or CosineDecayRestarts");
}

json serialize(const LearningRateSchedule& schedule) {
  return {{"module", "keras.optimizers.schedules"}, {"class_name", schedule.class_name()},
          {"config", schedule.get_config()}, {"registered_name", nullptr}};
}

}  // namespace tenfold::optimizers
