// The tenfold command: `tenfold train` runs the recipe (see README.md).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/random.h"
#include "datasets/fashion_mnist.h"
#include "datasets/idx.h"
#include "models/seed_cnn.h"
#include "optimizers/adam.h"
#include "losses/crossentropy.h"

namespace {

using namespace tenfold;

const char* train_help = R"(usage: tenfold train [options]

Trains the recipe's CNN (Conv2D 32 3x3 relu, MaxPooling2D, Flatten, Dense 128 relu,
Dense 10 softmax) with Adam and SparseCategoricalCrossentropy, reporting accuracy,
validating on the test split each epoch.

options:
  --data fashion-mnist|DIR  IDX files (.gz or raw) to train on (default fashion-mnist:
                            /usr/share/datasets/fashion-mnist)
  --epochs N                epochs (default 10)
  --batch-size N            batch size (default 512)
  --seed S                  seed for initial weights and shuffling (default 1337)
  --history FILE.json       write Keras' History (per-epoch loss, accuracy, val_loss,
                            val_accuracy) as JSON
  --verbose 0|1|2           progress output as Keras' fit (default 1)
)";

struct TrainOptions {
  std::string data = "fashion-mnist";
  int epochs = 10;
  int64_t batch_size = 512;
  uint64_t seed = 1337;
  std::string history_path;
  int verbose = 1;
};

int64_t parse_integer(const std::string& option, const std::string& text, int64_t minimum) {
  try {
    size_t used = 0;
    long long value = std::stoll(text, &used);
    if (used == text.size() && value >= minimum) return value;
  } catch (const std::exception&) {
  }
  throw Error(ErrorCode::invalid_argument, option + " expects an integer >= " +
                                               std::to_string(minimum) + ", got '" + text + "'");
}

TrainOptions parse_train_options(const std::vector<std::string>& args) {
  TrainOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& option = args[i];
    if (option == "--help" || option == "-h") {
      std::fputs(train_help, stdout);
      std::exit(0);
    }
    if (i + 1 >= args.size()) {
      throw Error(ErrorCode::invalid_argument,
                  "unknown option or missing value: '" + option + "'; see tenfold train --help");
    }
    const std::string& value = args[++i];
    if (option == "--data") {
      options.data = value;
    } else if (option == "--epochs") {
      options.epochs = int(parse_integer(option, value, 0));
    } else if (option == "--batch-size") {
      options.batch_size = parse_integer(option, value, 1);
    } else if (option == "--seed") {
      options.seed = uint64_t(parse_integer(option, value, 0));
    } else if (option == "--history") {
      options.history_path = value;
    } else if (option == "--verbose") {
      options.verbose = int(parse_integer(option, value, 0));
    } else {
      throw Error(ErrorCode::invalid_argument,
                  "unknown option '" + option + "'; see tenfold train --help");
    }
  }
  return options;
}

int train(const std::vector<std::string>& args) {
  TrainOptions options = parse_train_options(args);
  std::string directory = options.data == "fashion-mnist" ? TENFOLD_FASHION_MNIST_DIR : options.data;
  auto data = datasets::load_idx_directory(directory);
  Tensor x_train = datasets::images_to_float(data.train.images, 1.0f / 255.0f);
  Tensor y_train = datasets::labels_to_int32(data.train.labels);
  Tensor x_test = datasets::images_to_float(data.test.images, 1.0f / 255.0f);
  Tensor y_test = datasets::labels_to_int32(data.test.labels);

  set_random_seed(options.seed);
  auto model = models::seed_cnn();
  model->compile(std::make_shared<optimizers::Adam>(),
                 std::make_shared<losses::SparseCategoricalCrossentropy>(), {"accuracy"});
  if (options.verbose > 0) std::fputs(model->summary().c_str(), stdout);

  models::FitOptions fit;
  fit.batch_size = options.batch_size;
  fit.epochs = options.epochs;
  fit.verbose = options.verbose;
  fit.validation_data = {{x_test, y_test}};
  fit.shuffle_seed = options.seed;
  models::History history = model->fit(x_train, y_train, fit);

  auto test = model->evaluate(x_test, y_test, options.batch_size, 0);
  std::printf("Test loss: %.4f - test accuracy: %.4f\n", test.at("loss"), test.at("accuracy"));
  if (!options.history_path.empty()) {
    std::ofstream out(options.history_path);
    out << history.to_json().dump(2) << "\n";
    if (!out) {
      throw Error(ErrorCode::unavailable, "could not write history to " + options.history_path);
    }
  }
  return 0;
}

const char* usage = R"(usage: tenfold COMMAND [options]

commands:
  train     train the recipe's CNN on Fashion-MNIST (tenfold train --help)
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
    if (command == "train") return train(args);
    std::fprintf(stderr, "tenfold: unknown command '%s'\n%s", command.c_str(), usage);
    return 2;
  } catch (const tenfold::Error& error) {
    std::fprintf(stderr, "tenfold: %s\n", error.what());
    return 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "tenfold: internal error: %s\n", error.what());
    return 1;
  }
}
