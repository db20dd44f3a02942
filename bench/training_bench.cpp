// training: the Fashion-MNIST MLP (784-512-512-10, ReLU, softmax cross entropy, SGD, batch 128
// per worker, synthetic data) trained asynchronously by 1 ps + 2 workers as processes
// (between-graph replication, variables on the ps), with TLS (the default) and with
// --insecure, against the same model in one troupe process. The PyTorch peers (bench/peers/:
// one process, rpc parameter server, DDP) train the same model, batch and steps. Figures are
// examples/s over the measured steps, summed over workers. Every task takes the default
// intra-op threads (the cores shared among the host's tasks) unless $TROUPE_BENCH_THREADS
// sets them, for trying other counts.
#include <signal.h>

#include <fmt/core.h>

#include <iostream>
#include <random>

#include "apps/child_process.hpp"
#include "benchmarks.hpp"
#include "report.hpp"
#include "troupe/actors/free_ports.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/apps/deploy/throwaway_credentials.hpp"
#include "troupe/apps/training/monitored_session.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/device_setter.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/optimizers.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe::bench {
namespace {

constexpr int64_t kBatch = 128, kPixels = 784, kClasses = 10;
constexpr int kWarmupSteps = 20;
constexpr char kResultPrefix[] = "train-result ";

void check(const Status& status) {
  if (!status.ok()) throw StatusError(status);
}

struct Model {
  Output images, labels;
  Operation train;
};

Model build(const Scope& scope) {
  Model m;
  m.images =
      ops::Placeholder(scope.with_op_name("images"), DataType::kFloat, PartialShape({-1, kPixels}));
  m.labels = ops::Placeholder(scope.with_op_name("labels"), DataType::kInt64, PartialShape({-1}));
  Output h = m.images;
  int64_t width = kPixels;
  const std::vector<int64_t> sizes = {512, 512, kClasses};
  for (size_t i = 0; i < sizes.size(); ++i) {
    Scope s = scope.sub_scope(fmt::format("layer{}", i + 1));
    auto weights = make_variable(s, "weights", glorot_uniform({width, sizes[i]}, i + 1));
    auto biases = make_variable(s, "biases", zeros(DataType::kFloat, {sizes[i]}));
    h = ops::BiasAdd(s, ops::MatMul(s, h, weights.ref), biases.ref);
    if (i + 1 < sizes.size()) h = ops::Relu(s, h);
    width = sizes[i];
  }
  Output loss =
      ops::Mean(scope, ops::SparseSoftmaxCrossEntropyWithLogits(scope, h, m.labels).loss, {0});
  ModelVariable global_step = get_or_create_global_step(scope);
  m.train = value_or_throw(GradientDescentOptimizer(0.01).minimize(scope, loss, global_step.ref));
  return m;
}

std::pair<Tensor, Tensor> synthetic_batch(uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> pixel(0.f, 1.f);
  std::uniform_int_distribution<int64_t> label(0, kClasses - 1);
  std::vector<float> images(kBatch * kPixels);
  for (float& p : images)
    p = pixel(random);
  std::vector<int64_t> labels(kBatch);
  for (int64_t& l : labels)
    l = label(random);
  return {value_or_throw(Tensor::from_vector(images, TensorShape({kBatch, kPixels}))),
          Tensor::from_vector(labels)};
}

// Runs kWarmupSteps + `steps` steps; examples/s over the last `steps`.
double train(const std::string& target, const Scope& root, const Model& m, bool is_chief,
             std::optional<SessionConfig> config, int steps, uint64_t seed) {
  MonitoredTrainingSessionOptions options;
  options.master = target;
  options.is_chief = is_chief;
  options.config = std::move(config);
  auto session = value_or_throw(MonitoredTrainingSession::create(root, options));
  auto [images, labels] = synthetic_batch(seed);
  auto step = [&] {
    check(session->run({}, {{m.images, images}, {m.labels, labels}}, {m.train}).status());
  };
  for (int i = 0; i < kWarmupSteps; ++i)
    step();
  double s = seconds_of([&] {
    for (int i = 0; i < steps; ++i)
      step();
  });
  check(session->close());
  return static_cast<double>(steps * kBatch) / s;
}

double result_of(const testing::ProcessResult& run, const std::string& what) {
  return std::stod(child_result(run, kResultPrefix, what));
}

// $TROUPE_BENCH_THREADS, or 0 (the default rule).
int bench_threads() {
  const char* threads = std::getenv("TROUPE_BENCH_THREADS");
  return threads != nullptr ? std::stoi(threads) : 0;
}

// 1 ps (`troupe node`) + 2 train-workers as processes; examples/s summed over the workers. With
// `tls` credentials, or --insecure without.
double distributed_run(const BenchOptions& options, int steps, const TlsOptions& tls) {
  std::string ps = fmt::format("127.0.0.1:{}", value_or_throw(pick_free_port()));
  std::string workers = fmt::format("127.0.0.1:{},127.0.0.1:{}", value_or_throw(pick_free_port()),
                                    value_or_throw(pick_free_port()));
  std::vector<std::string> node_argv = {
      TROUPE_CLI,         "node",
      "--ps_hosts=" + ps, "--worker_hosts=" + workers,
      "--job_name=ps",    fmt::format("--intra_op_threads={}", bench_threads())};
  std::vector<std::string> env;
  if (tls.enabled()) {
    env = {"TROUPE_TLS_CERT=" + tls.certificate_file, "TROUPE_TLS_KEY=" + tls.key_file,
           "TROUPE_TLS_CA=" + tls.ca_file};
  } else {
    env = {"TROUPE_INSECURE=1"};
  }
  testing::ChildProcess node(node_argv, env);
  if (!node.wait_for("serving at", 30000)) throw std::runtime_error("ps node: " + node.output());
  std::vector<std::unique_ptr<testing::ChildProcess>> running;
  for (int task : {0, 1}) {
    running.push_back(std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{options.self, "train-worker", std::to_string(steps), ps, workers,
                                 std::to_string(task)},
        env));
  }
  double total = 0;
  for (auto& worker : running)
    total += result_of(worker->stop(0, 600000), "a training worker");
  node.stop(SIGTERM, 10000);
  return total;
}

}  // namespace

// `train-worker <steps> local` or `train-worker <steps> <ps address> <worker addresses>
// <task index>`: prints "train-result <examples/s>".
int training_worker_main(int argc, char** argv) {
  int steps = std::stoi(argv[0]);
  double rate = 0;
  if (std::string(argv[1]) == "local") {
    SessionConfig threads;
    threads.intra_op_threads = bench_threads();
    auto server = value_or_throw(Server::create_local_server(threads));
    Scope root = Scope::new_root();
    rate = train(server->target(), root, build(root), true, std::nullopt, steps, 1);
  } else {
    std::vector<std::string> workers = {argv[2]};
    if (size_t comma = workers[0].find(','); comma != std::string::npos) {
      workers = {workers[0].substr(0, comma), workers[0].substr(comma + 1)};
    }
    int task = std::stoi(argv[3]);
    auto cluster = value_or_throw(ClusterSpec::create({{"ps", {argv[1]}}, {"worker", workers}}));
    SessionConfig threads;
    threads.intra_op_threads = bench_threads();
    auto server = value_or_throw(Server::create(
        value_or_throw(ServerDef::create(cluster, "worker", task, "troupe", threads))));
    std::string device = fmt::format("/job:worker/task:{}", task);
    Scope root = Scope::new_root();
    Model m =
        build(root.with_device_function(value_or_throw(replica_device_setter(cluster, device))));
    SessionConfig config;
    config.device_filters = {"/job:ps", device};
    rate =
        train(server->target(), root, m, task == 0, config, steps, static_cast<uint64_t>(task + 1));
  }
  std::cout << kResultPrefix << rate << std::endl;
  return 0;
}

void training_bench(const BenchOptions& options) {
  const int steps = options.quick ? 20 : 300;
  auto credentials = value_or_throw(deploy::ThrowawayCredentials::create());
  std::vector<double> with_tls, insecure, single;
  for (int rep = 0; rep < (options.quick ? 1 : 3); ++rep) {
    with_tls.push_back(distributed_run(options, steps, credentials->tls()));
    insecure.push_back(distributed_run(options, steps, {}));
    single.push_back(
        result_of(testing::run_process(
                      {options.self, "train-worker", std::to_string(steps), "local"}, 600000),
                  "single-process training"));
  }
  const std::string threads = bench_threads() > 0
                                  ? fmt::format("{} intra-op threads per task", bench_threads())
                                  : "default intra-op threads";
  report({"training", "MLP 784-512-512-10, batch 128, SGD",
          fmt::format("troupe TLS, 1 ps + 2 workers (processes), {}", threads), "examples/s",
          with_tls});
  report({"training", "MLP 784-512-512-10, batch 128, SGD",
          fmt::format("troupe --insecure, 1 ps + 2 workers (processes), {}", threads), "examples/s",
          insecure});
  report({"training", "MLP 784-512-512-10, batch 128, SGD",
          fmt::format("troupe, one process, {}", threads), "examples/s", single});
}

}  // namespace troupe::bench
