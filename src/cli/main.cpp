// The tenfold command (see README.md): dispatches to the commands in src/cli/.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"

namespace {

const char* const usage = R"(usage: tenfold COMMAND [options]

commands:
  devices    the workers and devices training would use
  train      train the recipe's CNN on Fashion-MNIST on every device
  evaluate   evaluate a saved model on the test split
  predict    a saved model's predictions for the test split
  summary    a model's layers, shapes and parameters
  plot       draw a training history's loss and accuracy curves as a PNG

tenfold COMMAND --help describes each command's options.
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(usage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  try {
    std::string command = args[0];
    args.erase(args.begin());
    if (command == "devices") return tenfold::cli::devices(args);
    if (command == "train") return tenfold::cli::train(args);
    if (command == "evaluate") return tenfold::cli::evaluate(args);
    if (command == "predict") return tenfold::cli::predict(args);
    if (command == "summary") return tenfold::cli::summary(args);
    if (command == "plot") return tenfold::cli::plot(args);
    std::fprintf(stderr, "tenfold: unknown command '%s'\n%s", command.c_str(), usage);
    return 2;
  } catch (const tenfold::Error& error) {
    std::fflush(stdout);  // what the command printed comes before its error, also through a pipe
    std::fprintf(stderr, "tenfold: %s\n", error.what());
    return 1;
  } catch (const std::exception& error) {
    std::fflush(stdout);
    std::fprintf(stderr, "tenfold: internal error: %s\n", error.what());
    return 1;
  }
}
