// A worker for the multi-process tests (test_mpi.cpp): trains the recipe's model (or the
// --model one) on the first steps x 64 Fashion-MNIST samples, in batches of 64, with
// `replicas` local replicas, across the processes mpirun started (or alone without mpirun),
// and every worker writes what it ended with.
//
//   mpi_worker OUT REPLICAS STEPS [--model FILE.json] [--pid-dir DIR] [--shuffle-seed-by-rank]
//   mpi_worker --allreduce COUNT
//
// OUT (worker 0; OUT.<rank> for the others): loss and accuracy of the run (2 doubles), then
// every weight's floats in Keras' layout.
// --pid-dir: each worker writes its pid to DIR/rank_<rank> once training starts (the failure
// tests kill or stop one of them). --shuffle-seed-by-rank: each worker shuffles with its own
// seed, a mistake the strategy must catch.
// --allreduce: every rank sums COUNT floats, (rank + 1) * (i % 5) at i, and checks its own
// result against the closed form (i % 5) * W (W + 1) / 2, printing how many were wrong.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/random.h"
#include "datasets/mnist.h"
#include "distribute/strategy.h"
#include "io/model_file.h"
#include "models/seed_cnn.h"

using namespace tenfold;

int train(int argc, char** argv) {
  std::string out = argv[1];
  int replicas = std::atoi(argv[2]);
  int64_t steps = std::atoll(argv[3]);
  std::string pid_dir, model_json;
  bool shuffle_by_rank = false;
  for (int i = 4; i < argc; ++i) {
    std::string option = argv[i];
    if (option == "--model" && i + 1 < argc) model_json = argv[++i];
    if (option == "--pid-dir" && i + 1 < argc) pid_dir = argv[++i];
    if (option == "--shuffle-seed-by-rank") shuffle_by_rank = true;
  }
  auto resolver = distribute::ClusterResolver::from_environment();
  auto strategy = distribute::Strategy::multi_worker(resolver, distribute::split_cpu(replicas));

  const int64_t batch = 64, samples = std::min<int64_t>(steps * batch, 60000);
  auto all = datasets::fashion_mnist::load_data().train;
  datasets::Split data{all.images.slice_batch(0, samples).clone(), all.labels.slice_batch(0, samples).clone()};
  set_random_seed(21);
  std::unique_ptr<models::Model> model;
  {
    auto scope = strategy->scope();
    model = model_json.empty() ? models::seed_cnn() : io::load_model_json(model_json);
    model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  }
  if (!pid_dir.empty()) {
    std::ofstream(pid_dir + "/rank_" + std::to_string(strategy->communicator().rank())) << getpid() << "\n";
  }
  models::FitOptions options;
  options.verbose = 0;
  data::Dataset slices = datasets::to_dataset(data);
  if (shuffle_by_rank) slices = slices.shuffle(samples, uint64_t(strategy->communicator().rank()));
  data::Dataset batches = slices.batch(batch).repeat().take(steps);
  models::History history = model->fit(batches, options);
  const int rank = strategy->communicator().rank();
  if (rank == 0) {
    std::string hosts;
    for (const std::string& host : strategy->communicator().hosts()) hosts += " " + host;
    std::printf("workers on hosts:%s\n", hosts.c_str());
  }
  std::ofstream file(rank == 0 ? out : out + "." + std::to_string(rank), std::ios::binary);
  for (const char* key : {"loss", "accuracy"}) {
    double value = history.history.at(key).back();
    file.write(reinterpret_cast<const char*>(&value), sizeof value);
  }
  for (Variable* weight : model->weights()) {
    Tensor value = weight->read();
    file.write(static_cast<const char*>(value.raw_data()), std::streamsize(value.num_bytes()));
  }
  return file ? 0 : 1;
}

int allreduce(int64_t count) {
  auto resolver = distribute::ClusterResolver::from_environment();
  auto strategy = distribute::Strategy::multi_worker(resolver, distribute::split_cpu(1));
  distribute::Communicator& communicator = strategy->communicator();
  const int rank = communicator.rank(), workers = communicator.size();
  std::vector<float> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) values[size_t(i)] = float((rank + 1) * (i % 5));
  communicator.allreduce_sum(values.data(), count);
  int64_t wrong = 0;
  for (int64_t i = 0; i < count; ++i) {
    wrong += values[size_t(i)] != float((i % 5) * workers * (workers + 1) / 2);
  }
  std::printf("rank %d of %d: %lld of %lld sums wrong\n", rank, workers, (long long)wrong,
              (long long)count);
  return wrong == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--allreduce") {
    try {
      return allreduce(std::atoll(argv[2]));
    } catch (const Error& error) {
      std::fprintf(stderr, "mpi_worker: %s\n", error.what());
      return 1;
    }
  }
  if (argc < 4) {
    std::fprintf(stderr, "usage: mpi_worker OUT REPLICAS STEPS [--model FILE.json] [--pid-dir DIR] [--shuffle-seed-by-rank]\n");
    return 2;
  }
  try {
    return train(argc, argv);
  } catch (const Error& error) {
    std::fprintf(stderr, "mpi_worker: %s\n", error.what());
    return 1;
  }
}
