// tenfold summary MODEL: Keras' model.summary() of a saved model or a model JSON.
#include <cstdio>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "io/model_file.h"
#include "models/memory_check.h"

namespace tenfold::cli {

namespace {

const char* const summary_help = R"(usage: tenfold summary MODEL [--batch-size N]

Prints Keras' model.summary() of MODEL: a .h5 or .keras file, or a Keras model JSON
(model.to_json()); for a saved model, also what it was compiled with.

options:
  --batch-size N            also compile a training step for a per-replica batch of N and
                            print its arena: the memory of its activations and gradients
)";

}  // namespace

int summary(const std::vector<std::string>& args) {
  Arguments arguments("summary", args);
  if (arguments.wants_help()) {
    std::fputs(summary_help, stdout);
    return 0;
  }
  std::string model_path = arguments.take_required_positional("MODEL (a .h5, .keras or .json file)");
  int64_t batch_size = arguments.take_integer("--batch-size", 0, 1);
  arguments.finish();
  auto model = model_path.ends_with(".json") ? io::load_model_json(model_path) : io::load_model(model_path);
  std::fputs(model->summary().c_str(), stdout);
  if (model->optimizer() != nullptr) {
    std::string metrics;
    for (const std::string& metric : model->metric_names()) metrics += (metrics.empty() ? "" : ", ") + metric;
    std::printf("Compiled with: optimizer %s (learning rate %g, %lld steps taken), loss %s, metrics: %s\n",
                model->optimizer()->class_name().c_str(), double(model->optimizer()->learning_rate()),
                (long long)model->optimizer()->iterations(), model->loss()->class_name().c_str(),
                metrics.empty() ? "none" : metrics.c_str());
  }
  if (batch_size > 0) {
    const models::CompiledStep& step = model->compiled_step(batch_size, true);
    std::printf("Training step at per-replica batch %lld: arena %s (activations and gradients; "
                "%s without reuse)\n",
                (long long)batch_size, models::format_bytes(double(step.arena_bytes())).c_str(),
                models::format_bytes(double(step.unshared_bytes())).c_str());
  }
  return 0;
}

}  // namespace tenfold::cli
