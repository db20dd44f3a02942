// `troupe train`: the Fashion-MNIST trainer, troupe's version of the seed's trainer.py.
//
// Same flags as the seed (--ps_hosts --worker_hosts --job_name --task_index) or TF_CONFIG;
// without a cluster it trains in this one process. ps tasks serve until stopped. Workers build
// the same MLP under replica_device_setter (variables round-robin on the ps tasks, compute on
// the worker) and train it with between-graph replication: asynchronously by default, or
// synchronously with --sync_replicas. Worker 0 is the chief: it initialises or restores the
// model, writes checkpoints and TensorBoard summaries to --checkpoint_dir, evaluates on the test
// set every --eval_every_steps (summaries in --checkpoint_dir/eval), reports progress (to
// `troupe launch`, or as lines), and finally prints the test accuracy and loss. SIGINT or SIGTERM
// stops a worker after its current step; the chief then writes a final checkpoint (as TensorFlow's
// CheckpointSaverHook does at end) and exits with 128 + the signal; a worker still waiting for
// the chief stops waiting and exits the same way. A second signal ends the process at once.
#include <pthread.h>

#include <atomic>
#include <charconv>
#include <iostream>
#include <sstream>
#include <stop_token>
#include <thread>
#include <variant>

#include "troupe/actors/server.hpp"
#include "troupe/apps/cli/cluster_config.hpp"
#include "troupe/apps/cli/commands.hpp"
#include "troupe/apps/cli/exit_code.hpp"
#include "troupe/apps/cli/exit_now.hpp"
#include "troupe/apps/cli/fashion_mnist.hpp"
#include "troupe/apps/cli/health_endpoint.hpp"
#include "troupe/apps/cli/log_level_flag.hpp"
#include "troupe/apps/cli/runtime_flags.hpp"
#include "troupe/apps/cli/stop_signals.hpp"
#include "troupe/apps/training/monitored_session.hpp"
#include "troupe/apps/training/sync_replicas_hook.hpp"
#include "troupe/graph/device_setter.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/sync_replicas_optimizer.hpp"

namespace troupe::cli {
namespace {

struct Model {
  Output images;    // float32 [batch, 784]
  Output labels;    // int64 [batch]
  Output training;  // bool scalar, false unless fed: dropout is on while training (cnn)
  Output loss;      // mean cross entropy
  Output accuracy;  // fraction of the batch classified right
  ModelVariable global_step;
};

StatusOr<std::vector<int64_t>> parse_hidden(const std::string& text) {
  std::vector<int64_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int64_t size = 0;
    auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), size);
    if (error != std::errc() || end != item.data() + item.size() || size < 1) {
      return errors::InvalidArgument("--hidden={}: '{}' is not a layer size >= 1", text, item);
    }
    sizes.push_back(size);
  }
  return sizes;
}

// The loss, accuracy and global step of a model whose logits are `logits`.
void finish_model(const Scope& scope, const Output& logits, Model* m) {
  m->loss = ops::Mean(scope.with_op_name("loss"),
                      ops::SparseSoftmaxCrossEntropyWithLogits(scope, logits, m->labels).loss, {0});
  Output right = ops::Equal(scope, ops::ArgMax(scope, logits, 1), m->labels);
  m->accuracy =
      ops::Mean(scope.with_op_name("accuracy"), ops::Cast(scope, right, DataType::kFloat), {0});
  m->global_step = get_or_create_global_step(scope);
}

Model inputs(const Scope& scope) {
  Model m;
  m.images = ops::Placeholder(scope.with_op_name("images"), DataType::kFloat,
                              PartialShape({-1, kFashionMnistPixels}));
  m.labels = ops::Placeholder(scope.with_op_name("labels"), DataType::kInt64, PartialShape({-1}));
  m.training = ops::PlaceholderWithDefault(scope.with_op_name("training"), Tensor(false),
                                           PartialShape::scalar());
  return m;
}

// ReLU(x * w + b) of a layer named `name`: a convolution (5x5, SAME) when x is NHWC, else a
// matrix product. Initial weights: Glorot uniform; biases: zeros.
Output layer(const Scope& scope, const std::string& name, const Output& x, int64_t units,
             uint64_t seed, bool relu) {
  Scope s = scope.sub_scope(name);
  const int64_t depth = x.shape().dim(x.shape().rank() - 1);
  const bool conv = x.shape().rank() == 4;
  const TensorShape shape = conv ? TensorShape{5, 5, depth, units} : TensorShape{depth, units};
  auto weights = make_variable(s, "weights", glorot_uniform(shape, seed));
  auto biases = make_variable(s, "biases", zeros(DataType::kFloat, {units}));
  Output h =
      conv ? ops::Conv2D(s, x, weights.ref, {.padding = "SAME"}) : ops::MatMul(s, x, weights.ref);
  h = ops::BiasAdd(s, h, biases.ref);
  return relu ? ops::Relu(s, h) : h;
}

// The CNN of TensorFlow's tutorial: conv 5x5 (filters) + max pool, conv 5x5 (2 x filters) + max
// pool, dense (dense_units) with dropout while training, logits.
Model build_cnn(const Scope& scope, int64_t filters, int64_t dense_units, double dropout,
                uint64_t seed) {
  Model m = inputs(scope);
  const ops::PoolAttrs pool{.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"};
  Output x = ops::Reshape(scope, m.images, {-1, 28, 28, 1});
  x = ops::MaxPool(scope, layer(scope, "conv1", x, filters, seed, true), pool);
  x = ops::MaxPool(scope, layer(scope, "conv2", x, 2 * filters, seed + 1, true), pool);
  x = ops::Reshape(scope, x, {int64_t{-1}, 7 * 7 * 2 * filters});
  x = layer(scope, "dense", x, dense_units, seed + 2, true);
  if (dropout > 0) {
    // Kept with probability keep, scaled by 1 / keep: floor(keep + U[0, 1)) is 1 or 0.
    Scope s = scope.sub_scope("dropout");
    const float keep = static_cast<float>(1 - dropout);
    Output random = ops::RandomUniform(s, ops::Shape(s, x), DataType::kFloat,
                                       {.seed = static_cast<int64_t>(seed), .seed2 = 3});
    Output dropped = ops::Mul(s, ops::Div(s, x, keep), ops::Floor(s, ops::Add(s, random, keep)));
    x = ops::Select(s, m.training, dropped, x);
  }
  finish_model(scope, layer(scope, "logits", x, kFashionMnistClasses, seed + 3, false), &m);
  return m;
}

// The MLP: [784] -> hidden ReLU layers -> [10] logits, built under `scope`'s devices.
Model build_model(const Scope& scope, const std::vector<int64_t>& hidden, uint64_t seed) {
  Model m = inputs(scope);
  Output h = m.images;
  int64_t width = kFashionMnistPixels;
  std::vector<int64_t> sizes = hidden;
  sizes.push_back(kFashionMnistClasses);
  for (size_t i = 0; i < sizes.size(); ++i) {
    bool last = i + 1 == sizes.size();
    std::string layer = last ? "logits" : "layer" + std::to_string(i + 1);
    Scope s = scope.sub_scope(layer);
    auto weights = make_variable(s, "weights", glorot_uniform({width, sizes[i]}, seed + i));
    auto biases = make_variable(s, "biases", zeros(DataType::kFloat, {sizes[i]}));
    h = ops::BiasAdd(s, ops::MatMul(s, h, weights.ref), biases.ref);
    if (!last) h = ops::Relu(s, h);
    width = sizes[i];
  }
  finish_model(scope, h, &m);
  return m;
}

StatusOr<std::shared_ptr<Optimizer>> make_optimizer(const std::string& name, double lr) {
  if (name == "adam") return std::shared_ptr<Optimizer>(std::make_shared<AdamOptimizer>(lr));
  if (name == "sgd") {
    return std::shared_ptr<Optimizer>(std::make_shared<GradientDescentOptimizer>(lr));
  }
  if (name == "momentum") {
    return std::shared_ptr<Optimizer>(std::make_shared<MomentumOptimizer>(lr, 0.9));
  }
  if (name == "adagrad") return std::shared_ptr<Optimizer>(std::make_shared<AdagradOptimizer>(lr));
  return errors::InvalidArgument("--optimizer={}: expected adam, sgd, momentum or adagrad", name);
}

// Accuracy and mean loss over a whole data set, in slices.
StatusOr<EvaluationHook::Results> evaluate(Session& session, const Model& m, const Dataset& data) {
  constexpr int64_t kSlice = 2000;
  double right = 0, loss = 0;
  for (int64_t begin = 0; begin < data.size(); begin += kSlice) {
    int64_t n = std::min(kSlice, data.size() - begin);
    Tensor images(DataType::kFloat, TensorShape{n, kFashionMnistPixels});
    std::memcpy(images.raw_data(), data.images.data<float>() + begin * kFashionMnistPixels,
                images.total_bytes());
    Tensor labels(DataType::kInt64, TensorShape{n});
    std::memcpy(labels.raw_data(), data.labels.data<int64_t>() + begin, labels.total_bytes());
    TROUPE_ASSIGN_OR_RETURN(
        std::vector<Tensor> values,
        session.run({{m.images, images}, {m.labels, labels}}, {m.accuracy, m.loss}));
    right += values.at(0).scalar<float>() * static_cast<double>(n);
    loss += values.at(1).scalar<float>() * static_cast<double>(n);
  }
  double size = static_cast<double>(data.size());
  return EvaluationHook::Results{{"accuracy", right / size}, {"loss", loss / size}};
}

FlagSet train_flags() {
  FlagSet flags(*find_command_help("train"));
  add_cluster_flags(flags);
  add_runtime_flags(flags);
  add_log_level_flag(flags);
  add_health_port_flag(flags);
  flags.add_string("data_dir", kDefaultFashionMnistDir, "where the Fashion-MNIST .gz files are");
  flags.add_string("checkpoint_dir", "train_logs", "checkpoints and TensorBoard logs");
  flags.add_string("model", "mlp", "mlp (--hidden) or cnn (--filters, --dense_units, --dropout)");
  flags.add_string("hidden", "256,256", "hidden layer sizes");
  flags.add_int("filters", 32, "cnn: filters of the first convolution (the second has twice)");
  flags.add_int("dense_units", 1024, "cnn: units of the dense layer");
  flags.add_string("dropout", "0.4", "cnn: the dense layer's dropout rate while training");
  flags.add_string("optimizer", "adam", "adam, sgd, momentum or adagrad");
  flags.add_string("learning_rate", "0.0005", "the optimizer's learning rate");
  flags.add_int("batch_size", 128, "examples per step and worker");
  flags.add_int("epochs", 15, "passes over the training set (all workers together)");
  flags.add_int("save_checkpoint_steps", 200, "global steps between checkpoints");
  flags.add_int("log_every", 200, "steps between loss/accuracy lines of the chief");
  flags.add_int("eval_every_steps", 0,
                "global steps between the chief's evaluations on the test set (0: one per epoch)");
  flags.add_bool("sync_replicas", false, "train synchronously (SyncReplicasOptimizer)");
  flags.add_int("replicas_to_aggregate", 0, "gradients per synchronous step (0: every worker)");
  flags.add_int("seed", 42, "seed of the initial weights and the data order");
  flags.add_int("intra_op_threads", 0,
                "threads per kernel (0: the cores shared among the tasks on this host)");
  return flags;
}

// The health endpoint --health_port asks for (null for none); its failure as an exit code.
std::variant<std::unique_ptr<HealthEndpoint>, int> start_health(int port, Server& server) {
  auto health = start_health_endpoint(port, server, "train");
  if (!health.ok()) {
    std::cerr << "troupe train: " << health.status().message() << "\n";
    return 1;
  }
  return std::move(health).value();
}

int serve_ps(const ServerDef& def, int health_port, StopSignals& stop_signals) {
  auto server = Server::create(def);
  if (!server.ok()) {
    std::cerr << "troupe train: " << server.status().to_string() << "\n";
    return 1;
  }
  std::cout << "troupe train: " << (*server)->task_name() << " serving at " << (*server)->target()
            << std::endl;
  auto health = start_health(health_port, **server);
  if (const int* exit_code = std::get_if<int>(&health)) return *exit_code;
  stop_signals.wait();
  (*server)->stop();
  exit_now(0);
}

// The signal that asked training to stop (0: none yet), and the same as a stop request for a
// worker still waiting for the chief. Process-wide: the thread that waits for signals
// outlives train_command.
std::atomic<int> stop_signal{0};
std::stop_source stop_waiting;

// Whether `status` is the Cancelled a stop signal caused (it ended a wait for the chief).
bool cancelled_by_stop_signal(const Status& status) {
  return stop_signal.load() != 0 && status.code() == Code::kCancelled;
}

const char* signal_name(int signal) {
  return signal == SIGINT ? "SIGINT" : "SIGTERM";
}

// Waits for SIGINT and SIGTERM on a thread of its own: the first one asks training to stop
// after the current step, a second one ends the process at once.
void watch_stop_signals(StopSignals signals) {
  std::thread([signals]() mutable {
    pthread_setname_np(pthread_self(), "troupe-signals");
    for (;;) {
      int signal = signals.wait();
      if (stop_signal.exchange(signal) != 0) exit_now(128 + signal);
      stop_waiting.request_stop();
    }
  }).detach();
}

}  // namespace

static int run_train(const Args& args) {
  StopSignals stop_signals;  // before any thread starts, so that none is interrupted
  FlagSet flags = train_flags();
  if (auto exit_code = flags.parse_command_line(args)) return *exit_code;
  if (auto exit_code = apply_log_level_flag(flags, "train")) return *exit_code;
  auto fail = [](const Status& status, int code = 1) {
    std::cerr << "troupe train: " << status.to_string() << "\n";
    return code;
  };
  auto configured = server_def_from_flags(flags);
  if (!configured.ok()) return fail(configured.status(), 2);
  auto hidden = parse_hidden(flags.get_string("hidden"));
  if (!hidden.ok()) return fail(hidden.status(), 2);
  double learning_rate = 0;
  try {
    learning_rate = std::stod(flags.get_string("learning_rate"));
  } catch (const std::exception&) {
    return fail(errors::InvalidArgument("--learning_rate={} is not a number",
                                        flags.get_string("learning_rate")),
                2);
  }
  const std::string model_name = flags.get_string("model");
  if (model_name != "mlp" && model_name != "cnn") {
    return fail(errors::InvalidArgument("--model={}: expected mlp or cnn", model_name), 2);
  }
  double dropout = 0;
  try {
    dropout = std::stod(flags.get_string("dropout"));
  } catch (const std::exception&) {
    dropout = -1;
  }
  if (!(dropout >= 0 && dropout < 1)) {
    return fail(errors::InvalidArgument("--dropout={}: expected a rate in [0, 1)",
                                        flags.get_string("dropout")),
                2);
  }
  if (flags.get_int("filters") < 1 || flags.get_int("dense_units") < 1) {
    return fail(errors::InvalidArgument("--filters={} and --dense_units={} must be >= 1",
                                        flags.get_int("filters"), flags.get_int("dense_units")),
                2);
  }
  auto optimizer = make_optimizer(flags.get_string("optimizer"), learning_rate);
  if (!optimizer.ok()) return fail(optimizer.status(), 2);
  int64_t batch_size = flags.get_int("batch_size"), epochs = flags.get_int("epochs");
  if (batch_size < 1 || epochs < 1) {
    return fail(errors::InvalidArgument("--batch_size and --epochs must be >= 1"), 2);
  }
  if (flags.get_int("eval_every_steps") < 0) {
    return fail(errors::InvalidArgument("--eval_every_steps={} is negative (expected steps >= 0; "
                                        "0 evaluates once per epoch)",
                                        flags.get_int("eval_every_steps")),
                2);
  }

  std::optional<ServerDef> def = *configured;
  // A task of a cluster listens for the others; a single process does not.
  if (def) {
    if (auto exit_code = apply_runtime_flags(flags, "train")) return *exit_code;
  }
  if (def) {
    def->default_session_config.intra_op_threads =
        static_cast<int>(flags.get_int("intra_op_threads"));
  }
  auto health_port = health_port_of(flags);
  if (!health_port.ok()) return fail(health_port.status(), 2);
  if (def && def->job_name == "ps") return serve_ps(*def, *health_port, stop_signals);
  if (def && def->job_name != "worker") {
    return fail(errors::InvalidArgument("job '{}' has no part in training (expected ps or worker)",
                                        def->job_name),
                2);
  }
  watch_stop_signals(stop_signals);
  int task_index = def ? def->task_index : 0;
  int num_workers = def ? def->cluster.num_tasks("worker").value() : 1;
  bool is_chief = task_index == 0;

  auto train = load_fashion_mnist(flags.get_string("data_dir"), true);
  if (!train.ok()) return fail(train.status());
  auto test = load_fashion_mnist(flags.get_string("data_dir"), false);
  if (!test.ok()) return fail(test.status());

  std::unique_ptr<Server> server;
  if (def) {
    auto created = Server::create(*def);
    if (!created.ok()) return fail(created.status());
    server = std::move(created).value();
  } else {
    SessionConfig config;
    config.intra_op_threads = static_cast<int>(flags.get_int("intra_op_threads"));
    auto created = Server::create_local_server(config);
    if (!created.ok()) return fail(created.status());
    server = std::move(created).value();
  }
  auto health = start_health(*health_port, *server);
  if (const int* exit_code = std::get_if<int>(&health)) return *exit_code;
  std::string worker_device =
      fmt::format("/job:{}/task:{}", def ? def->job_name : "localhost", task_index);

  // Between-graph replication: every worker builds the same graph.
  Scope root = Scope::new_root();
  Scope placed = root;
  if (def) {
    auto setter = replica_device_setter(def->cluster, worker_device);
    if (!setter.ok()) return fail(setter.status());
    placed = root.with_device_function(*setter);
  }
  const uint64_t seed = static_cast<uint64_t>(flags.get_int("seed"));
  Model m = model_name == "cnn" ? build_cnn(placed, flags.get_int("filters"),
                                            flags.get_int("dense_units"), dropout, seed)
                                : build_model(placed, *hidden, seed);
  bool sync = flags.get_bool("sync_replicas");
  int replicas = flags.get_int("replicas_to_aggregate") > 0
                     ? static_cast<int>(flags.get_int("replicas_to_aggregate"))
                     : num_workers;
  int64_t examples_per_step = sync ? batch_size * replicas : batch_size;
  int64_t last_step = std::max<int64_t>(1, epochs * train->size() / examples_per_step);
  std::unique_ptr<SyncReplicasOptimizer> sync_optimizer;
  Operation train_op;
  if (sync) {
    sync_optimizer = std::make_unique<SyncReplicasOptimizer>(*optimizer, replicas, num_workers);
    Status built = sync_optimizer->minimize(placed, m.loss, m.global_step, worker_device);
    if (!built.ok()) return fail(built);
    train_op = sync_optimizer->train_op();
  } else {
    auto built = (*optimizer)->minimize(placed, m.loss, m.global_step.ref);
    if (!built.ok()) return fail(built.status());
    train_op = *built;
  }
  if (!root.ok()) return fail(root.status());

  MonitoredTrainingSessionOptions options;
  options.master = server->target();
  options.is_chief = is_chief;
  if (def) {
    // As TensorFlow's trainers do: a worker sees the ps tasks and itself only, so it neither
    // waits for nor depends on the other workers.
    SessionConfig config = def->default_session_config;
    config.device_filters = {"/job:ps", worker_device};
    options.config = config;
  }
  options.checkpoint_dir = flags.get_string("checkpoint_dir");
  options.save_checkpoint_steps = flags.get_int("save_checkpoint_steps");
  // TensorBoard: the batch's loss and accuracy, the learning rate, and (from the session)
  // global_step/sec and examples/sec; evaluations on the test set go to <checkpoint_dir>/eval
  // under the same tags, so TensorBoard draws them on the same charts.
  options.summaries = {{"loss", m.loss},
                       {"accuracy", m.accuracy},
                       {"learning_rate", ops::Const(placed.with_op_name("learning_rate"),
                                                    static_cast<float>(learning_rate))}};
  options.examples_per_step = examples_per_step;
  int64_t steps_per_epoch = std::max<int64_t>(1, train->size() / examples_per_step);
  auto evaluation = std::make_shared<EvaluationHook>(
      options.checkpoint_dir.empty() ? std::string() : options.checkpoint_dir + "/eval",
      m.global_step.ref,
      flags.get_int("eval_every_steps") > 0 ? flags.get_int("eval_every_steps") : steps_per_epoch,
      [&m, &test](Session& session) { return evaluate(session, m, *test); },
      "troupe train: test set ");
  options.hooks = {std::make_shared<StopAtStepHook>(m.global_step.ref, last_step),
                   std::make_shared<NanTensorHook>(m.loss)};
  options.chief_only_hooks = {
      std::make_shared<LoggingTensorHook>(
          std::vector<std::pair<std::string, Output>>{
              {"step", m.global_step.ref}, {"loss", m.loss}, {"accuracy", m.accuracy}},
          flags.get_int("log_every")),
      std::make_shared<ProgressHook>(
          m.global_step.ref, last_step,
          std::vector<std::pair<std::string, Output>>{{"loss", m.loss}},
          ProgressHook::Options{.style = ProgressHook::style_from_environment(),
                                .every_secs = 0.5,
                                .examples_per_step = examples_per_step,
                                .prefix = "troupe train: "}),
      evaluation};
  if (sync) {
    options.hooks.push_back(
        std::make_shared<SyncReplicasHook>(*sync_optimizer, is_chief, server->target(),
                                           /*init_tokens=*/Operation(), options.config));
  }
  options.stop = stop_waiting.get_token();
  auto session = MonitoredTrainingSession::create(root, options);
  if (!session.ok() && cancelled_by_stop_signal(session.status())) {
    int signal = stop_signal.load();
    std::cout << fmt::format("troupe train: stopped by {} while waiting for the chief",
                             signal_name(signal))
              << std::endl;
    return 128 + signal;
  }
  if (!session.ok()) return fail(session.status());
  MonitoredTrainingSession& mts = **session;
  auto global_step = mts.session().run(m.global_step.ref);
  if (!global_step.ok()) return fail(global_step.status());
  int64_t start_step = global_step->scalar<int64_t>();
  std::string restored =
      mts.restored_from() ? ", restored from " + *mts.restored_from() : std::string();
  if (start_step >= last_step) {
    // Asynchronous workers may have overshot the last step by a step each, as in TensorFlow.
    std::cout << fmt::format("troupe train: {}{}: training is done (step {}, {} to train){}{}",
                             worker_device, is_chief ? " (chief)" : "", start_step, last_step,
                             restored, is_chief ? "; evaluating" : "")
              << std::endl;
  } else {
    std::cout << fmt::format("troupe train: {}{} at step {} of {}{}", worker_device,
                             is_chief ? " (chief)" : "", start_step, last_step, restored)
              << std::endl;
  }

  auto sharded =
      ShardedBatches::create(*train, task_index, num_workers, static_cast<int>(batch_size),
                             static_cast<uint64_t>(flags.get_int("seed")));
  if (!sharded.ok()) return fail(sharded.status());
  ShardedBatches& batches = *sharded;
  Tensor images, labels;
  while (start_step < last_step && !mts.should_stop() && stop_signal.load() == 0) {
    batches.next(&images, &labels);
    auto ran = mts.run({}, {{m.images, images}, {m.labels, labels}, {m.training, Tensor(true)}},
                       {train_op});
    // A stop signal also ends a recovery's wait for the chief.
    if (!ran.ok() && !cancelled_by_stop_signal(ran.status())) return fail(ran.status());
  }
  if (int signal = stop_signal.load(); signal != 0) {
    // The chief's CheckpointSaverHook saves the step reached as the session closes. A stop
    // during a recovery (a ps lost, say) ends it, and the final save may then be impossible:
    // the line says so, and which checkpoint a restart would resume from.
    std::string at_step;
    (void)mts.run_step_fn([&](Session& session) -> Status {
      TROUPE_ASSIGN_OR_RETURN(Tensor reached, session.run(m.global_step.ref));
      at_step = " at step " + std::to_string(reached.scalar<int64_t>());
      return Status::OK();
    });
    Status closed = mts.close();
    std::string saved;
    if (is_chief && !options.checkpoint_dir.empty()) {
      auto latest = latest_checkpoint(options.checkpoint_dir);
      if (latest.ok() && latest->has_value()) saved = **latest;
    }
    if (closed.ok()) {
      std::cout << fmt::format("troupe train: stopped by {}{}{}", signal_name(signal), at_step,
                               saved.empty() ? "" : ", checkpoint " + saved)
                << std::endl;
    } else {
      std::cout << fmt::format("troupe train: stopped by {}{} without a final checkpoint ({}){}",
                               signal_name(signal), at_step, closed.to_string(),
                               saved.empty() ? "" : "; the newest is " + saved)
                << std::endl;
    }
    return 128 + signal;
  }
  if (is_chief) {
    // The final evaluation survives a lost ps as the training steps do.
    StatusOr<std::vector<std::pair<std::string, double>>> results = Status::OK();
    Status evaluated = mts.run_step_fn([&](Session& session) -> Status {
      TROUPE_ASSIGN_OR_RETURN(Tensor reached, session.run(m.global_step.ref));
      results = evaluation->evaluate_now(session, reached.scalar<int64_t>(), /*print_line=*/false);
      return results.status();
    });
    if (!evaluated.ok()) return fail(evaluated);
    std::cout << fmt::format("troupe train: test accuracy {:.4f}, test loss {:.4f} ({} examples)",
                             results->at(0).second, results->at(1).second, test->size())
              << std::endl;
  }
  Status closed = mts.close();
  if (!closed.ok()) return fail(closed);
  return 0;
}

int train_command(const Args& args) {
  return exit_code_of("train", [&] { return run_train(args); });
}

}  // namespace troupe::cli
