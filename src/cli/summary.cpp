// tenfold summary MODEL: Keras' model.summary() of a saved model or a model JSON.
#include <cstdio>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "io/model_file.h"

namespace tenfold::cli {

namespace {

const char* const help = R"(usage: tenfold summary MODEL

Prints Keras' model.summary() of MODEL: a .h5 or .keras file, or a Keras model JSON
(model.to_json()); for a saved model, also what it was compiled with.
)";

}  // namespace

int summary(const std::vector<std::string>& args) {
  Arguments arguments("summary", args);
  if (arguments.wants_help()) {
    std::fputs(help, stdout);
    return 0;
  }
  std::string model_path = arguments.take_required_positional("MODEL (a .h5, .keras or .json file)");
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
  return 0;
}

}  // namespace tenfold::cli
