// Strategies in one process: N local replicas train to the weights of one replica on the same
// global batches; devices, device threads, scopes, and the cluster resolver's addresses.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "core/error.h"
#include "core/random.h"
#include "datasets/idx.h"
#include "datasets/mnist.h"
#include "distribute/cluster_resolver.h"
#include "distribute/strategy.h"
#include "io/model_file.h"
#include "layers/dense.h"
#include "layers/flatten.h"
#include "layers/input.h"
#include "layers/merge.h"
#include "layers/padding.h"
#include "models/functional.h"
#include "models/seed_cnn.h"
#include "support/check.h"

namespace tenfold::distribute {
namespace {

namespace fs = std::filesystem;
using testing::error_of;

struct Trained {
  std::vector<Tensor> weights;
  models::History history;
};

/// A model trained for 5 steps (batches of 64, 64, 64, 64, 3: the last smaller than 8
/// replicas) on Fashion-MNIST, under `strategy`: the recipe's, or with `model_json` that one;
/// `prepare` changes it before compile.
Trained train_five_steps(const std::shared_ptr<Strategy>& strategy, const std::string& model_json = "",
                         const std::function<void(models::Model&)>& prepare = {}) {
  static const datasets::Split data = [] {
    auto all = datasets::fashion_mnist::load_data().train;
    return datasets::Split{all.images.slice_batch(0, 259).clone(), all.labels.slice_batch(0, 259).clone()};
  }();
  set_random_seed(21);
  std::unique_ptr<models::Model> model;
  {
    auto scope = strategy->scope();
    model = model_json.empty() ? models::seed_cnn() : io::load_model_json(model_json);
    if (prepare) prepare(*model);
    model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  }
  EXPECT_EQ(&model->strategy(), strategy.get());
  models::FitOptions options;
  options.verbose = 0;
  Trained trained;
  trained.history = model->fit(datasets::to_dataset(data).batch(64), options);
  for (Variable* weight : model->weights()) trained.weights.push_back(weight->read());
  return trained;
}

/// The replica counts compared with one device. Under ThreadSanitizer, where each training
/// takes seconds, those that add something to race: two replicas, and eight, which the last
/// batch of 3 rows leaves some without rows.
#ifdef TENFOLD_THREAD_SANITIZER
const std::vector<int> kReplicaCounts = {2, 8};
#else
const std::vector<int> kReplicaCounts = {1, 2, 4, 8};
#endif

/// Training under each of kReplicaCounts ends with the weights (within rtol 1e-5 and `atol`),
/// loss and accuracy of one.
void expect_replicas_train_as_one(const std::string& model_json, double atol = 1e-7,
                                  const std::function<void(models::Model&)>& prepare = {}) {
  Trained one = train_five_steps(Strategy::one_device(), model_json, prepare);
  for (int replicas : kReplicaCounts) {
    SCOPED_TRACE(std::to_string(replicas) + " replicas");
    auto strategy = Strategy::mirrored(split_cpu(replicas));
    EXPECT_EQ(strategy->num_replicas_in_sync(), replicas);
    Trained many = train_five_steps(strategy, model_json, prepare);
    for (size_t i = 0; i < one.weights.size(); ++i) {
      EXPECT_TRUE(testing::all_close(many.weights[i], one.weights[i], 1e-5, atol)) << "weight " << i;
    }
    for (const char* key : {"loss", "accuracy"}) {
      EXPECT_NEAR(many.history.history.at(key)[0], one.history.history.at(key)[0],
                  1e-5 * std::abs(one.history.history.at(key)[0]))
          << key;
    }
  }
}

TEST(MirroredStrategy, ReplicasTrainToTheWeightsOfOne) { expect_replicas_train_as_one(""); }

TEST(MirroredStrategy, ReplicasTrainAResidualModelToTheWeightsOfOne) {
  expect_replicas_train_as_one(testing::fixture_path("keras/parity_residual/model.json"));
}

TEST(MirroredStrategy, ReplicasTrainSharedLayersToTheWeightsOfOne) {
  // Each replica sums a shared layer's gradient over its calls before the replicas' sum.
  expect_replicas_train_as_one(testing::fixture_path("keras/parity_shared/model.json"));
  // A shared Dense of 274,400 weights, more than a bucket of the gradient reducer (2^18): its
  // buckets must wait for its first call's backward, which runs last.
  reset_layer_names();
  set_random_seed(3);
  auto inputs = layers::Input({28, 28, 1});
  auto shared = std::make_shared<layers::Dense>(layers::DenseOptions{.units = 700, .activation = "tanh"});
  auto half = [&](layers::Borders crop) {
    return (*shared)((*std::make_shared<layers::Flatten>())((*std::make_shared<layers::Cropping2D>(crop))(inputs)));
  };
  KerasTensor difference = (*std::make_shared<layers::Subtract>())({half({{{0, 14}, {0, 0}}}), half({{{14, 0}, {0, 0}}})});
  models::Functional model(inputs, (*std::make_shared<layers::Dense>(layers::DenseOptions{.units = 10, .activation = "softmax"}))(difference));
  const fs::path path = fs::temp_directory_path() / ("tenfold_shared_" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << model.to_config().dump();
  // atol 1e-6: Adam moves an element whose gradient is near zero by its rounding, which the
  // order of the replicas' sums changes (measured: 5 of 274,400 elements, up to 6e-7).
  expect_replicas_train_as_one(path.string(), 1e-6);
  fs::remove(path);
}

TEST(MirroredStrategy, RegularizersAndConstraintsApplyAsOnOneReplica) {
  // The weight penalties' gradient joins the reduced gradient once, not once per replica, the
  // activity penalties' (each replica's rows over the global batch) add up to one replica's,
  // and the reported loss holds both once.
  expect_replicas_train_as_one("", 1e-7, [](models::Model& model) {
    for (Layer* layer : model.layers()) {
      if (layer->class_name() != "Conv2D" && layer->class_name() != "Dense") continue;
      layer->set_weight_regularizer("kernel", Regularizer{.l1 = 0.001, .l2 = 0.01});
      layer->set_weight_constraint("kernel", Constraint{.kind = Constraint::Kind::max_norm, .max_value = 0.5});
      layer->set_activity_regularizer(Regularizer{.l1 = 0.001, .l2 = 0.001});
    }
  });
}

TEST(MirroredStrategy, SynchronizedBatchNormalizationTrainsAsOneReplica) {
  // Statistics over the global batch, summed across replicas in forward and backward; the
  // last batch (3 rows) leaves replicas without rows.
  // atol 1e-6: Adam's first step moves every element by about its learning rate whatever
  // its gradient's size, so an element whose gradient is near zero (1e-5 of the largest)
  // moves by its rounding, which the order of the replicas' sums changes (1.3e-7 measured).
  expect_replicas_train_as_one(testing::fixture_path("keras/parity_batchnorm/model_synchronized.json"), 1e-6);
}

TEST(MirroredStrategy, BatchNormalizationKeepsTheFirstReplicasMovingStatistics) {
  // synchronized=false: each replica normalises with its own rows, and the moving statistics
  // follow the first replica's (the copy Keras' MirroredStrategy reads and saves). After one
  // step on 64 rows over 2 replicas they are those of one replica stepping on rows 0-31.
  const std::string path = testing::fixture_path("keras/parity_batchnorm/model.json");
  auto data = datasets::fashion_mnist::load_data().train;
  auto moving_statistics = [&](const std::shared_ptr<Strategy>& strategy, int64_t rows) {
    set_random_seed(21);
    auto scope = strategy->scope();
    auto model = io::load_model_json(path);
    model->compile("adam", "sparse_categorical_crossentropy");
    model->train_on_batch(datasets::images_to_float(data.images.slice_batch(0, rows), 1.0f / 255),
                          datasets::labels_to_int32(data.labels.slice_batch(0, rows)));
    std::vector<Tensor> statistics;
    for (Variable* weight : model->weights()) {
      if (!weight->trainable()) statistics.push_back(weight->read());
    }
    return statistics;
  };
  std::vector<Tensor> two = moving_statistics(Strategy::mirrored(split_cpu(2)), 64);
  std::vector<Tensor> first_half = moving_statistics(Strategy::one_device(), 32);
  std::vector<Tensor> whole = moving_statistics(Strategy::one_device(), 64);
  ASSERT_EQ(two.size(), 6u);
  for (size_t i = 0; i < two.size(); ++i) {
    EXPECT_TRUE(testing::all_close(two[i], first_half[i], 1e-6, 1e-7)) << "statistic " << i;
    EXPECT_FALSE(testing::all_close(two[i], whole[i], 1e-6, 1e-9)) << "statistic " << i;
  }
}

TEST(MirroredStrategy, ModelCompiledOutsideTheScopeIsReportedAtFit) {
  auto strategy = Strategy::mirrored(split_cpu(2));
  set_random_seed(1);
  auto model = models::seed_cnn();  // outside strategy->scope()
  model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  EXPECT_EQ(model->strategy().num_replicas_in_sync(), 1);
  Tensor x(Shape{4, 28, 28, 1}), y(Shape{4}, DType::int32);
  models::FitOptions options;
  options.verbose = 0;
  options.batch_size = 4;
  ::testing::internal::CaptureStderr();
  model->fit(x, y, options);
  model->fit(x, y, options);
  std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("built outside strategy.scope(): training on 1 of 2 devices; build and "
                          "compile it inside the scope"),
            std::string::npos)
      << warnings;
  EXPECT_EQ(warnings.find("WARNING"), warnings.rfind("WARNING")) << "warned more than once";
}

TEST(Strategy, ScopesNestAndTheDefaultIsOneDevice) {
  EXPECT_EQ(current_strategy()->name(), "OneDeviceStrategy");
  EXPECT_EQ(current_strategy()->num_replicas_in_sync(), 1);
  auto mirrored = Strategy::mirrored(split_cpu(3));
  {
    auto outer = mirrored->scope();
    EXPECT_EQ(current_strategy(), mirrored);
    auto single = Strategy::one_device();
    {
      auto inner = single->scope();
      EXPECT_EQ(current_strategy(), single);
    }
    EXPECT_EQ(current_strategy(), mirrored);
  }
  EXPECT_EQ(current_strategy()->name(), "OneDeviceStrategy");
  auto local = Strategy::multi_worker(ClusterResolver::local(), split_cpu(2));
  EXPECT_EQ(local->name(), "MultiWorkerMirroredStrategy");
  EXPECT_EQ(local->num_replicas_in_sync(), 2);
  EXPECT_TRUE(local->is_chief());
}

TEST(Devices, SplitTheCoresAndNameThemAsTensorFlow) {
  std::vector<int> cores = available_cores();
  std::vector<Device> devices = split_cpu(int(cores.size()));
  ASSERT_EQ(devices.size(), cores.size());
  EXPECT_EQ(devices[0].name(), "/device:CPU:0");
  for (size_t i = 0; i < devices.size(); ++i) EXPECT_EQ(devices[i].cores, std::vector<int>{cores[i]});
  std::vector<Device> one = split_cpu(1);
  EXPECT_EQ(one[0].cores, cores);
  std::vector<Device> many = split_cpu(8);  // more devices than cores: shared round robin
  ASSERT_EQ(many.size(), 8u);
  for (const Device& device : many) EXPECT_EQ(device.cores.size(), 1u);
  EXPECT_NE(error_of([] { split_cpu(0); }).find("must be >= 1"), std::string::npos);
  configure_logical_devices(3);
  EXPECT_EQ(list_logical_devices().size(), 3u);
  configure_logical_devices(int(cores.size()));
}

TEST(DeviceThreads, RunEveryDeviceOnItsOwnThreadAndPassErrorsBack) {
  DeviceThreads threads(split_cpu(4));
  std::mutex mutex;
  std::set<std::thread::id> ids;
  std::vector<int> ran(4, 0);
  for (int round = 0; round < 3; ++round) {
    threads.run([&](int device) {
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
      ++ran[size_t(device)];
    });
  }
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_EQ(ran, std::vector<int>(4, 3));
  EXPECT_NE(error_of([&] {
              threads.run([](int device) {
                if (device == 2) throw Error(ErrorCode::internal, "replica 2 failed");
              });
            }).find("replica 2 failed"),
            std::string::npos);
  threads.run([&](int device) { ++ran[size_t(device)]; });  // still serves after an error
  EXPECT_EQ(ran, std::vector<int>(4, 4));
}

TEST(ClusterResolver, ParsesWorkerListsAndSlurmNodeLists) {
  auto resolver = ClusterResolver::from_workers("grpc://10.0.0.1:8470,host-b:8471", 1);
  ASSERT_EQ(resolver.num_workers(), 2);
  EXPECT_EQ(resolver.task_index(), 1);
  EXPECT_EQ(resolver.workers()[0].to_string(), "10.0.0.1:8470");
  EXPECT_EQ(resolver.workers()[1].host, "host-b");
  EXPECT_NE(error_of([] { ClusterResolver::from_workers("a:8470,b"); }).find("'b' has no host:port"),
            std::string::npos);
  EXPECT_NE(error_of([] { ClusterResolver::from_workers("a:99999"); }).find("not 1..65535"),
            std::string::npos);
  EXPECT_NE(error_of([] { ClusterResolver::from_workers(""); }).find("no worker addresses"),
            std::string::npos);
  EXPECT_EQ(expand_slurm_nodelist("node[01-03,07],gpu5"),
            (std::vector<std::string>{"node01", "node02", "node03", "node07", "gpu5"}));
  EXPECT_EQ(expand_slurm_nodelist("a,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_NE(error_of([] {
              Strategy::multi_worker(ClusterResolver::from_workers("a:1,b:2"));
            }).find("needs its processes started by mpirun"),
            std::string::npos);
}

TEST(ClusterResolver, ReadsMpirunAndSlurmEnvironments) {
  EXPECT_FALSE(ClusterResolver::from_environment().launched_by_mpi());
  EXPECT_EQ(ClusterResolver::from_environment().num_workers(), 1);
  ::setenv("SLURM_PROCID", "1", 1);
  ::setenv("SLURM_NTASKS", "4", 1);
  ::setenv("SLURM_JOB_NODELIST", "node[1-2]", 1);
  auto slurm = ClusterResolver::from_environment();
  EXPECT_TRUE(slurm.launched_by_mpi());
  EXPECT_EQ(slurm.num_workers(), 4);
  EXPECT_EQ(slurm.task_index(), 1);
  ASSERT_EQ(slurm.workers().size(), 2u);
  EXPECT_EQ(slurm.workers()[1].host, "node2");
  ::unsetenv("SLURM_PROCID");
  ::unsetenv("SLURM_NTASKS");
  ::unsetenv("SLURM_JOB_NODELIST");
  ::setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  auto ompi = ClusterResolver::from_environment();
  EXPECT_EQ(ompi.num_workers(), 3);
  EXPECT_EQ(ompi.task_index(), 2);
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("OMPI_COMM_WORLD_RANK");
}

TEST(ClusterResolver, ConnectNamesTheUnreachableWorkerWithinTheTimeout) {
  // A listening socket on a free port, and a port nobody listens on.
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t length = sizeof address;
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  std::string open = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  ClusterResolver::from_workers(open).connect(2);

  std::string closed_port = error_of([&] { ClusterResolver::from_workers(open + ",127.0.0.1:1").connect(2); });
  EXPECT_NE(closed_port.find("cannot reach worker 127.0.0.1:1 (Connection refused)"), std::string::npos)
      << closed_port;
  // An address that never answers (TEST-NET-1 is not routed): the error comes at the timeout.
  auto start = std::chrono::steady_clock::now();
  std::string silent = error_of([] { ClusterResolver::from_workers("grpc://192.0.2.1:8470").connect(0.5); });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(silent.find("cannot reach worker 192.0.2.1:8470"), std::string::npos) << silent;
  EXPECT_LT(seconds, 3.0);
  close(listener);
}

}  // namespace
}  // namespace tenfold::distribute
