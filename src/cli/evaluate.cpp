// tenfold evaluate MODEL: a saved model, loaded back in the strategy's scope, on any data.
#include <cstdio>

#include "cli/cluster.h"
#include "cli/commands.h"
#include "cli/data.h"
#include "core/error.h"
#include "io/model_file.h"

namespace tenfold::cli {

namespace {

const char* const evaluate_help = R"(usage: tenfold evaluate MODEL [options]

Loads MODEL (a Keras .h5 or .keras file, as Keras' model.save or tenfold train --save writes
it) in the strategy's scope and evaluates it with the loss and metrics it was compiled with
(Keras' model.evaluate) on --data: a data set's test split (IDX t10k files, an .npz's x_test),
or all of it.

options:
  --batch-size N            global batch size, split across all replicas (default 512)
  --verbose 0|1             0: the result only (default); 1: a progress bar as well
)";

}  // namespace

std::string test_results(const std::map<std::string, double>& results) {
  char text[64];
  std::snprintf(text, sizeof text, "Test loss: %.4f", results.at("loss"));
  std::string line = text;
  for (const auto& [name, value] : results) {
    if (name == "loss") continue;
    std::snprintf(text, sizeof text, " - test %s: %.4f", name.c_str(), value);
    line += text;
  }
  return line;
}

int evaluate(const std::vector<std::string>& args) {
  Arguments arguments("evaluate", args);
  if (arguments.wants_help()) {
    std::printf("%s%s%s", evaluate_help, data_options_help, cluster_options_help);
    return 0;
  }
  DataOptions data_options = DataOptions::take(arguments);
  int64_t batch_size = arguments.take_integer("--batch-size", 512, 1);
  int verbose = int(arguments.take_integer("--verbose", 0, 0));
  auto strategy = resolve_and_connect(arguments);
  std::string model_path = arguments.take_required_positional("MODEL (a .h5 or .keras file)");
  arguments.finish();

  std::unique_ptr<models::Model> model;
  {
    auto scope = strategy->scope();
    model = io::load_model(model_path);
  }
  check_argument(model->loss() != nullptr,
                 model_path + " was saved without compile(): evaluate needs the loss it was compiled with; "
                              "compile the model before saving it (or train it with tenfold train --loss)");
  UserData data = read_data(data_options, *model, "test");
  auto results = model->evaluate(labelled_batches(data, *model, batch_size, false, 0).batches, verbose);
  if (strategy->is_chief()) std::printf("%s\n", test_results(results).c_str());
  return 0;
}

}  // namespace tenfold::cli
