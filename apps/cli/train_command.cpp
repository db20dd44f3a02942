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
#include "troupe/apps/cli/health_port.hpp"
#include "troupe/apps/cli/log_level_flag.hpp"
#include "troupe/apps/cli/runtime_flags.hpp"
#include "troupe/apps/cli/stop_signals.hpp"
#include "troupe/apps/cli/training_problem.hpp"
#include "troupe/apps/cli/wide_deep_model.hpp"
#include "troupe/apps/data/fashion_mnist.hpp"
#include "troupe/apps/data/fashion_mnist_records.hpp"
#include "troupe/apps/training/monitored_session.hpp"
#include "troupe/apps/training/sync_replicas_hook.hpp"
#include "troupe/graph/core/logging.hpp"
#include "troupe/graph/device_setter.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/sync_replicas_optimizer.hpp"

namespace troupe::cli {
namespace {

struct Model {
  Output images;    // float32 [batch, 784]
  Output labels;    // int64 [batch]
  Output training;  // bool scalar, false unless fed: dropout is on while training (cnn)
  Output loss;      // mean cross entropy (with towers: the mean of the towers')
  Output accuracy;  // fraction of the batch classified right (likewise)
  // The same for a batch of any size, computed whole on the worker's first device: the test
  // set's evaluation (with one tower, loss and accuracy themselves).
  Output eval_loss, eval_accuracy;
  // With several towers: each tower's scope (on its device) and loss, for its gradients.
  std::vector<Scope> tower_scopes;
  std::vector<Output> tower_losses;
  ModelVariable global_step;
};

// Layer sizes from flag `flag`'s value "256,256".
StatusOr<std::vector<int64_t>> parse_layer_sizes(const std::string& flag, const std::string& text) {
  std::vector<int64_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int64_t size = 0;
    auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), size);
    if (error != std::errc() || end != item.data() + item.size() || size < 1) {
      return errors::InvalidArgument("--{}={}: '{}' is not a layer size >= 1", flag, text, item);
    }
    sizes.push_back(size);
  }
  return sizes;
}

// A layer's variables: the weights of a 5x5 convolution (SAME) or of a matrix product, and the
// biases. Initial weights: Glorot uniform; biases: zeros.
struct Layer {
  Output weights, biases;
  bool conv = false;
};

Layer make_layer(const Scope& scope, const std::string& name, int64_t depth, int64_t units,
                 bool conv, uint64_t seed) {
  Scope s = scope.sub_scope(name);
  const TensorShape shape = conv ? TensorShape{5, 5, depth, units} : TensorShape{depth, units};
  return Layer{make_variable(s, "weights", glorot_uniform(shape, seed)).ref,
               make_variable(s, "biases", zeros(DataType::kFloat, {units})).ref, conv};
}

// x * w + b of `layer`, ReLU'd when `relu`, under `scope`.
Output apply_layer(const Scope& scope, const Layer& layer, const Output& x, bool relu) {
  Output h = layer.conv ? ops::Conv2D(scope, x, layer.weights, {.padding = "SAME"})
                        : ops::MatMul(scope, x, layer.weights);
  h = ops::BiasAdd(scope, h, layer.biases);
  return relu ? ops::Relu(scope, h) : h;
}

// A model: its variables, made once by its builder, and its logits for a batch of images,
// computed under any scope: each tower computes them on its own device with the same variables.
using Forward = std::function<Output(const Scope& scope, const Output& images,
                                     const Output& training, int tower)>;

// The CNN of TensorFlow's tutorial: conv 5x5 (filters) + max pool, conv 5x5 (2 x filters) + max
// pool, dense (dense_units) with dropout while training, logits.
Forward build_cnn(const Scope& scope, int64_t filters, int64_t dense_units, double dropout,
                  uint64_t seed) {
  Layer conv1 = make_layer(scope, "conv1", 1, filters, true, seed);
  Layer conv2 = make_layer(scope, "conv2", filters, 2 * filters, true, seed + 1);
  Layer dense = make_layer(scope, "dense", 7 * 7 * 2 * filters, dense_units, false, seed + 2);
  Layer logits = make_layer(scope, "logits", dense_units, kFashionMnistClasses, false, seed + 3);
  return [=](const Scope& s, const Output& images, const Output& training, int tower) {
    const ops::PoolAttrs pool{.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"};
    Output x = ops::Reshape(s, images, {-1, 28, 28, 1});
    x = ops::MaxPool(s, apply_layer(s.sub_scope("conv1"), conv1, x, true), pool);
    x = ops::MaxPool(s, apply_layer(s.sub_scope("conv2"), conv2, x, true), pool);
    x = ops::Reshape(s, x, {int64_t{-1}, 7 * 7 * 2 * filters});
    x = apply_layer(s.sub_scope("dense"), dense, x, true);
    if (dropout > 0) {
      // Kept with probability keep, scaled by 1 / keep: floor(keep + U[0, 1)) is 1 or 0.
      Scope d = s.sub_scope("dropout");
      const float keep = static_cast<float>(1 - dropout);
      Output random = ops::RandomUniform(d, ops::Shape(d, x), DataType::kFloat,
                                         {.seed = static_cast<int64_t>(seed), .seed2 = 3 + tower});
      Output dropped = ops::Mul(d, ops::Div(d, x, keep), ops::Floor(d, ops::Add(d, random, keep)));
      x = ops::Select(d, training, dropped, x);
    }
    return apply_layer(s.sub_scope("logits"), logits, x, false);
  };
}

// The MLP: [784] -> hidden ReLU layers -> [10] logits.
Forward build_mlp(const Scope& scope, const std::vector<int64_t>& hidden, uint64_t seed) {
  std::vector<int64_t> sizes = hidden;
  sizes.push_back(kFashionMnistClasses);
  std::vector<std::pair<std::string, Layer>> layers;
  int64_t width = kFashionMnistPixels;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string name = i + 1 == sizes.size() ? "logits" : "layer" + std::to_string(i + 1);
    layers.emplace_back(name, make_layer(scope, name, width, sizes[i], false, seed + i));
    width = sizes[i];
  }
  return [layers](const Scope& s, const Output& images, const Output&, int) {
    Output h = images;
    for (size_t i = 0; i < layers.size(); ++i)
      h = apply_layer(s.sub_scope(layers[i].first), layers[i].second, h, i + 1 < layers.size());
    return h;
  };
}

// The mean cross entropy and the accuracy of `logits` against `labels`.
std::pair<Output, Output> loss_and_accuracy(const Scope& scope, const Output& logits,
                                            const Output& labels, const std::string& prefix) {
  Output loss =
      ops::Mean(scope.with_op_name(prefix + "loss"),
                ops::SparseSoftmaxCrossEntropyWithLogits(scope, logits, labels).loss, {0});
  Output right = ops::Equal(scope, ops::ArgMax(scope, logits, 1), labels);
  Output accuracy = ops::Mean(scope.with_op_name(prefix + "accuracy"),
                              ops::Cast(scope, right, DataType::kFloat), {0});
  return {loss, accuracy};
}

// The model's inputs, losses and global step. With one tower the logits are computed under
// `scope` (the worker's devices); with several, the batch is split in equal slices and tower i
// computes its slice's logits and loss on tower_devices[i], under the name scope "tower_i"
// (TensorFlow's multi-tower pattern); `forward`'s variables stay where its builder made them.
// `input`: the batches a tf.data pipeline reads (--data=tfrecord:DIR), which the images and
// labels take unless fed (the evaluation feeds the test set); null: they must be fed.
Model build_model(const Scope& scope, const Forward& forward,
                  const std::vector<std::string>& tower_devices, const RecordBatches* input) {
  Model m;
  if (input != nullptr) {
    m.images = ops::PlaceholderWithDefault(scope.with_op_name("images"), input->images,
                                           PartialShape({-1, kFashionMnistPixels}));
    m.labels = ops::PlaceholderWithDefault(scope.with_op_name("labels"), input->labels,
                                           PartialShape({-1}));
  } else {
    m.images = ops::Placeholder(scope.with_op_name("images"), DataType::kFloat,
                                PartialShape({-1, kFashionMnistPixels}));
    m.labels = ops::Placeholder(scope.with_op_name("labels"), DataType::kInt64, PartialShape({-1}));
  }
  m.training = ops::PlaceholderWithDefault(scope.with_op_name("training"), Tensor(false),
                                           PartialShape::scalar());
  if (tower_devices.size() <= 1) {
    std::tie(m.loss, m.accuracy) =
        loss_and_accuracy(scope, forward(scope, m.images, m.training, 0), m.labels, "");
    m.eval_loss = m.loss;
    m.eval_accuracy = m.accuracy;
  } else {
    const int towers = static_cast<int>(tower_devices.size());
    std::vector<Output> image_slices = ops::Split(scope, 0, m.images, towers);
    std::vector<Output> label_slices = ops::Split(scope, 0, m.labels, towers);
    std::vector<Input> accuracies;
    for (int i = 0; i < towers; ++i) {
      Scope tower =
          scope.root().with_device(tower_devices[i]).sub_scope(fmt::format("tower_{}", i));
      auto [loss, accuracy] = loss_and_accuracy(
          tower, forward(tower, image_slices[i], m.training, i), label_slices[i], "");
      m.tower_scopes.push_back(tower);
      m.tower_losses.push_back(loss);
      accuracies.push_back(accuracy);
    }
    const float share = 1.0f / static_cast<float>(towers);
    std::vector<Input> losses(m.tower_losses.begin(), m.tower_losses.end());
    m.loss = ops::Mul(scope.with_op_name("loss"), ops::AddN(scope, losses), share);
    m.accuracy = ops::Mul(scope.with_op_name("accuracy"), ops::AddN(scope, accuracies), share);
    Scope eval = scope.sub_scope("eval");
    std::tie(m.eval_loss, m.eval_accuracy) =
        loss_and_accuracy(eval, forward(eval, m.images, m.training, 0), m.labels, "eval_");
  }
  m.global_step = get_or_create_global_step(scope);
  return m;
}

// The training step with several towers: each tower's gradients on its device, their mean per
// variable, one update (TensorFlow's average_gradients and apply_gradients).
StatusOr<Operation> train_towers(const Scope& scope, Optimizer& optimizer, const Model& m) {
  std::vector<std::vector<GradientAndVariable>> per_tower;
  for (size_t i = 0; i < m.tower_losses.size(); ++i) {
    TROUPE_ASSIGN_OR_RETURN(auto grads,
                            optimizer.compute_gradients(m.tower_scopes[i], m.tower_losses[i]));
    per_tower.push_back(std::move(grads));
  }
  const float share = 1.0f / static_cast<float>(per_tower.size());
  std::vector<GradientAndVariable> averaged;
  for (size_t v = 0; v < per_tower[0].size(); ++v) {
    std::vector<Input> grads;
    for (size_t i = 0; i < per_tower.size(); ++i) {
      const Gradient& g = per_tower[i][v].gradient;
      if (g.valid()) grads.push_back(to_dense(m.tower_scopes[i], g));
    }
    if (grads.empty()) continue;
    Scope s = scope.sub_scope("average_gradients");
    averaged.push_back(
        {Gradient(ops::Mul(s, ops::AddN(s, grads), share)), per_tower[0][v].variable});
  }
  return optimizer.apply_gradients(scope, averaged, m.global_step.ref);
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
        session.run({{m.images, images}, {m.labels, labels}}, {m.eval_accuracy, m.eval_loss}));
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
  flags.add_string("model", "mlp",
                   "mlp (--hidden) or cnn (--filters, --dense_units, --dropout) on Fashion-MNIST, "
                   "or wide_deep (--table_rows, --embedding_dim, --deep_units) on a synthetic "
                   "click-through task");
  flags.add_string("hidden", "256,256", "hidden layer sizes");
  flags.add_int("filters", 32, "cnn: filters of the first convolution (the second has twice)");
  flags.add_int("dense_units", 1024, "cnn: units of the dense layer");
  flags.add_string("dropout", "0.4", "cnn: the dense layer's dropout rate while training");
  flags.add_int("table_rows", 1000000, "wide_deep: rows of the embedding tables (26 features)");
  flags.add_int("embedding_dim", 16, "wide_deep: width of each embedding");
  flags.add_string("deep_units", "400,400", "wide_deep: sizes of the MLP's hidden layers");
  flags.add_string("zipf", "2.0", "wide_deep: the Zipf exponent of the ids (> 1)");
  flags.add_int("test_examples", 20000, "wide_deep: examples of the test sample");
  flags.add_int("train_steps", 0,
                "global steps to train (0: --epochs passes over the training set; wide_deep: "
                "3000)");
  flags.add_string("optimizer", "adam", "adam, sgd, momentum or adagrad (wide_deep: adagrad)");
  flags.add_string("learning_rate", "0.0005", "the optimizer's learning rate (wide_deep: 0.2)");
  flags.add_string("data", "idx",
                   "where the examples come from: idx (the IDX files of --data_dir, fed from "
                   "memory) or tfrecord:DIR (the TFRecord files `troupe data fashion-mnist` "
                   "wrote, read by a tf.data pipeline on the worker)");
  flags.add_int("batch_size", 128, "examples per step and worker (wide_deep: 512)");
  flags.add_int("epochs", 15, "passes over the training set (all workers together)");
  flags.add_int("save_checkpoint_steps", 200, "global steps between checkpoints");
  flags.add_bool("sharded_checkpoints", true,
                 "each task holding variables (the ps) writes its own part of each checkpoint to "
                 "--checkpoint_dir, which every task must see (a shared volume); false: the chief "
                 "fetches every variable and writes one file");
  flags.add_int("log_every", 200, "steps between loss/accuracy lines of the chief");
  flags.add_int("eval_every_steps", 0,
                "global steps between the chief's evaluations on the test set (0: one per epoch; "
                "wide_deep: 1000)");
  flags.add_bool("sync_replicas", false, "train synchronously (SyncReplicasOptimizer)");
  flags.add_int("replicas_to_aggregate", 0, "gradients per synchronous step (0: every worker)");
  flags.add_int("seed", 42, "seed of the initial weights and the data order");
  flags.add_int("intra_op_threads", 0,
                "threads per kernel (0: the cores shared among the tasks on this host)");
  flags.add_int("cpu_devices", 0,
                "CPU devices of the task, CPU:0 .. CPU:k-1, sharing its intra-op threads (0: one, "
                "or --towers when the towers are on CPUs)");
  flags.add_int("towers", 1,
                "model replicas per worker, one per device, on equal slices of the batch, their "
                "gradients averaged (TensorFlow's multi-tower training)");
  flags.add_string("tower_device", "cpu", "the towers' devices: cpu (CPU:0..) or gpu (GPU:0..)");
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
  auto hidden = parse_layer_sizes("hidden", flags.get_string("hidden"));
  if (!hidden.ok()) return fail(hidden.status(), 2);
  const std::string model_name = flags.get_string("model");
  if (model_name != "mlp" && model_name != "cnn" && model_name != "wide_deep") {
    return fail(errors::InvalidArgument("--model={}: expected mlp, cnn or wide_deep", model_name),
                2);
  }
  // The click-through model has defaults of its own (examples/python/wide_deep.py's).
  const bool wide_deep = model_name == "wide_deep";
  auto model_default = [&](const std::string& flag, std::string value) {
    return wide_deep && !flags.was_set(flag) ? value : flags.get_string(flag);
  };
  double learning_rate = 0;
  try {
    learning_rate = std::stod(model_default("learning_rate", "0.2"));
  } catch (const std::exception&) {
    return fail(errors::InvalidArgument("--learning_rate={} is not a number",
                                        flags.get_string("learning_rate")),
                2);
  }
  auto deep_units = parse_layer_sizes("deep_units", flags.get_string("deep_units"));
  if (!deep_units.ok()) return fail(deep_units.status(), 2);
  double zipf = 0;
  try {
    zipf = std::stod(flags.get_string("zipf"));
  } catch (const std::exception&) {
    zipf = 0;
  }
  if (wide_deep) {
    if (flags.get_int("table_rows") < kCtrCategorical) {
      return fail(errors::InvalidArgument("--table_rows={}: expected at least {} (a row per "
                                          "categorical feature)",
                                          flags.get_int("table_rows"), kCtrCategorical),
                  2);
    }
    if (!(zipf > 1)) {
      return fail(errors::InvalidArgument("--zipf={}: expected a Zipf exponent above 1",
                                          flags.get_string("zipf")),
                  2);
    }
    if (flags.get_int("embedding_dim") < 1 || flags.get_int("test_examples") < 2) {
      return fail(
          errors::InvalidArgument("--embedding_dim={} must be >= 1 and --test_examples={} "
                                  ">= 2",
                                  flags.get_int("embedding_dim"), flags.get_int("test_examples")),
          2);
    }
    if (flags.was_set("data")) {
      return fail(errors::InvalidArgument("--data={}: --model=wide_deep draws its own examples "
                                          "(a synthetic click-through task)",
                                          flags.get_string("data")),
                  2);
    }
    if (flags.get_int("towers") > 1) {
      return fail(errors::Unimplemented("--towers={} with --model=wide_deep: not supported (towers "
                                        "are built for the Fashion-MNIST models)",
                                        flags.get_int("towers")),
                  2);
    }
  }
  if (flags.get_int("train_steps") < 0) {
    return fail(errors::InvalidArgument("--train_steps={} is negative (expected steps >= 0; 0 "
                                        "trains for --epochs)",
                                        flags.get_int("train_steps")),
                2);
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
  auto optimizer = make_optimizer(model_default("optimizer", "adagrad"), learning_rate);
  if (!optimizer.ok()) return fail(optimizer.status(), 2);
  int64_t batch_size =
      wide_deep && !flags.was_set("batch_size") ? 512 : flags.get_int("batch_size");
  int64_t epochs = flags.get_int("epochs");
  if (batch_size < 1 || epochs < 1) {
    return fail(errors::InvalidArgument("--batch_size and --epochs must be >= 1"), 2);
  }
  if (flags.get_int("eval_every_steps") < 0) {
    return fail(errors::InvalidArgument("--eval_every_steps={} is negative (expected steps >= 0; "
                                        "0 evaluates once per epoch)",
                                        flags.get_int("eval_every_steps")),
                2);
  }

  const int64_t towers = flags.get_int("towers");
  const std::string tower_device = flags.get_string("tower_device");
  if (towers < 1 || towers > SessionConfig::kMaxCpuDevices) {
    return fail(errors::InvalidArgument("--towers={}: expected 1 to {}", towers,
                                        SessionConfig::kMaxCpuDevices),
                2);
  }
  if (tower_device != "cpu" && tower_device != "gpu") {
    return fail(errors::InvalidArgument("--tower_device={}: expected cpu or gpu", tower_device), 2);
  }
  if (batch_size % towers != 0) {
    return fail(errors::InvalidArgument("--batch_size={} is not a multiple of --towers={} (each "
                                        "tower takes an equal slice of the batch)",
                                        batch_size, towers),
                2);
  }
  if (towers > 1 && flags.get_bool("sync_replicas")) {
    return fail(errors::Unimplemented("--towers={} with --sync_replicas: not supported yet "
                                      "(towers train asynchronously across workers)",
                                      towers),
                2);
  }
  int cpu_devices = static_cast<int>(flags.get_int("cpu_devices"));
  if (cpu_devices == 0 && tower_device == "cpu") cpu_devices = static_cast<int>(towers);

  std::optional<ServerDef> def = *configured;
  // A task of a cluster listens for the others; a single process does not.
  if (def) {
    if (auto exit_code = apply_runtime_flags(flags, "train")) return *exit_code;
  }
  if (def) {
    def->default_session_config.intra_op_threads =
        static_cast<int>(flags.get_int("intra_op_threads"));
    def->default_session_config.cpu_devices = cpu_devices;
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

  // --data=tfrecord:DIR: the worker reads its shard of the records through a tf.data
  // pipeline; the chief's evaluation reads the test records into memory.
  std::string records_dir;
  std::vector<std::string> record_files;
  StatusOr<Dataset> train = Status::OK(), test = Status::OK();
  std::optional<PlantedCtr> ctr;
  int64_t train_size = 0;
  if (wide_deep) {
    auto created = PlantedCtr::create(flags.get_int("table_rows"), zipf, /*seed=*/0);
    if (!created.ok()) return fail(created.status(), 2);
    ctr = std::move(created).value();
  } else if (flags.get_string("data").starts_with("tfrecord:")) {
    records_dir = flags.get_string("data").substr(std::string("tfrecord:").size());
    auto files = fashion_mnist_record_files(records_dir, "train");
    if (!files.ok()) return fail(files.status());
    record_files = *files;
    auto counted = count_records(record_files);
    if (!counted.ok()) return fail(counted.status());
    train_size = *counted;
    test = read_fashion_mnist_records(records_dir, "test");
    if (!test.ok()) return fail(test.status());
  } else if (flags.get_string("data") == "idx") {
    train = load_fashion_mnist(flags.get_string("data_dir"), true);
    if (!train.ok()) return fail(train.status());
    train_size = train->size();
    test = load_fashion_mnist(flags.get_string("data_dir"), false);
    if (!test.ok()) return fail(test.status());
  } else {
    return fail(errors::InvalidArgument("--data={}: expected idx or tfrecord:DIR",
                                        flags.get_string("data")),
                2);
  }

  std::unique_ptr<Server> server;
  if (def) {
    auto created = Server::create(*def);
    if (!created.ok()) return fail(created.status());
    server = std::move(created).value();
  } else {
    SessionConfig config;
    config.intra_op_threads = static_cast<int>(flags.get_int("intra_op_threads"));
    config.cpu_devices = cpu_devices;
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
  TrainingProblem problem;
  std::optional<Model> fashion_model;  // the mlp's or cnn's tensors
  if (wide_deep) {
    const int num_ps = def && def->cluster.num_tasks("ps").ok() ? *def->cluster.num_tasks("ps") : 0;
    auto built = build_wide_deep(placed, *ctr,
                                 WideDeepOptions{.embedding_dim = flags.get_int("embedding_dim"),
                                                 .deep_units = *deep_units,
                                                 .num_shards = std::max(1, num_ps),
                                                 .batch_size = batch_size,
                                                 .test_examples = flags.get_int("test_examples"),
                                                 .seed = seed,
                                                 .task_index = task_index});
    if (!built.ok()) return fail(built.status());
    problem = std::move(built).value();
  } else {
    Forward forward = model_name == "cnn" ? build_cnn(placed, flags.get_int("filters"),
                                                      flags.get_int("dense_units"), dropout, seed)
                                          : build_mlp(placed, *hidden, seed);
    std::vector<std::string> tower_devices;
    for (int64_t i = 0; i < towers; ++i) {
      tower_devices.push_back(
          fmt::format("{}/device:{}:{}", worker_device, tower_device == "gpu" ? "GPU" : "CPU", i));
    }
    std::optional<RecordBatches> input;
    if (!records_dir.empty()) {
      input = fashion_mnist_record_batches(placed, record_files, task_index, num_workers,
                                           batch_size, seed);
    }
    const Model& m = fashion_model.emplace(
        build_model(placed, forward, tower_devices, input ? &*input : nullptr));
    problem = TrainingProblem{
        .loss = m.loss,
        .accuracy = m.accuracy,
        .training = m.training,
        .global_step = m.global_step,
        .next_batch = nullptr,
        .evaluate = [&m, &test](Session& session) { return evaluate(session, m, *test); },
        .describe =
            [&test](const EvaluationHook::Results& results) {
              return fmt::format("test accuracy {:.4f}, test loss {:.4f} ({} examples)",
                                 results.at(0).second, results.at(1).second, test->size());
            }};
    if (records_dir.empty()) {  // the examples are fed from memory
      auto sharded = ShardedBatches::create(*train, task_index, num_workers,
                                            static_cast<int>(batch_size), seed);
      if (!sharded.ok()) return fail(sharded.status());
      auto batches = std::make_shared<ShardedBatches>(std::move(sharded).value());
      problem.next_batch = [batches, images = m.images, labels = m.labels](FeedDict& feeds) {
        Tensor image_batch, label_batch;
        batches->next(&image_batch, &label_batch);
        feeds.push_back({images, image_batch});
        feeds.push_back({labels, label_batch});
      };
    }
  }
  bool sync = flags.get_bool("sync_replicas");
  int replicas = flags.get_int("replicas_to_aggregate") > 0
                     ? static_cast<int>(flags.get_int("replicas_to_aggregate"))
                     : num_workers;
  int64_t examples_per_step = sync ? batch_size * replicas : batch_size;
  int64_t last_step = flags.get_int("train_steps") > 0 ? flags.get_int("train_steps")
                      : wide_deep                      ? 3000
                                  : std::max<int64_t>(1, epochs * train_size / examples_per_step);
  std::unique_ptr<SyncReplicasOptimizer> sync_optimizer;
  Operation train_op;
  if (sync) {
    sync_optimizer = std::make_unique<SyncReplicasOptimizer>(*optimizer, replicas, num_workers);
    Status built =
        sync_optimizer->minimize(placed, problem.loss, problem.global_step, worker_device);
    if (!built.ok()) return fail(built);
    train_op = sync_optimizer->train_op();
  } else if (towers > 1) {
    auto built = train_towers(placed, **optimizer, *fashion_model);
    if (!built.ok()) return fail(built.status());
    train_op = *built;
  } else {
    auto built = (*optimizer)->minimize(placed, problem.loss, problem.global_step.ref);
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
  options.sharded_checkpoints = flags.get_bool("sharded_checkpoints");
  // TensorBoard: the batch's loss and accuracy, the learning rate, and (from the session)
  // global_step/sec and examples/sec; evaluations on the test set go to <checkpoint_dir>/eval
  // under the same tags, so TensorBoard draws them on the same charts.
  options.summaries = {{"loss", problem.loss},
                       {"accuracy", problem.accuracy},
                       {"learning_rate", ops::Const(placed.with_op_name("learning_rate"),
                                                    static_cast<float>(learning_rate))}};
  options.examples_per_step = examples_per_step;
  // The synthetic task has no epochs: it is evaluated every 1000 steps by default.
  int64_t steps_per_epoch = wide_deep ? 1000 : std::max<int64_t>(1, train_size / examples_per_step);
  auto evaluation = std::make_shared<EvaluationHook>(
      options.checkpoint_dir.empty() ? std::string() : options.checkpoint_dir + "/eval",
      problem.global_step.ref,
      flags.get_int("eval_every_steps") > 0 ? flags.get_int("eval_every_steps") : steps_per_epoch,
      problem.evaluate, "troupe train: test set ");
  options.hooks = {std::make_shared<StopAtStepHook>(problem.global_step.ref, last_step),
                   std::make_shared<NanTensorHook>(problem.loss)};
  options.chief_only_hooks = {
      std::make_shared<LoggingTensorHook>(
          std::vector<std::pair<std::string, Output>>{{"step", problem.global_step.ref},
                                                      {"loss", problem.loss},
                                                      {"accuracy", problem.accuracy}},
          flags.get_int("log_every")),
      std::make_shared<ProgressHook>(
          problem.global_step.ref, last_step,
          std::vector<std::pair<std::string, Output>>{{"loss", problem.loss}},
          ProgressHook::Options{.style = ProgressHook::style_from_environment(),
                                .every_secs = 0.5,
                                .examples_per_step = examples_per_step,
                                .prefix = "troupe train: "}),
      evaluation};
  std::shared_ptr<SyncReplicasHook> sync_hook;
  if (sync) {
    sync_hook = std::make_shared<SyncReplicasHook>(*sync_optimizer, is_chief, server->target(),
                                                   /*init_tokens=*/Operation(), options.config);
    options.hooks.push_back(sync_hook);
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
  auto global_step = mts.session().run(problem.global_step.ref);
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

  int64_t steps_run = 0;
  while (start_step < last_step && !mts.should_stop() && stop_signal.load() == 0) {
    FeedDict feeds{{problem.training, Tensor(true)}};
    if (problem.next_batch) problem.next_batch(feeds);
    auto ran = mts.run({}, feeds, {train_op});
    if (ran.ok()) ++steps_run;
    if (!ran.ok() && stop_signal.load() != 0) break;  // reported below as the stop it is
    // A stop signal also ends a recovery's wait for the chief.
    if (!ran.ok() && !cancelled_by_stop_signal(ran.status())) {
      // The chief's failed update loop closed the token queue its step waited on: its error is
      // the one that counts.
      if (sync_hook != nullptr && !sync_hook->loop_status().ok()) {
        return fail(sync_hook->loop_status());
      }
      // The token queue this step waited on is closed (by a chief whose update failed, which the
      // chief reports): training is over only if the last step was reached.
      if (sync && ran.status().code() == Code::kOutOfRange) {
        auto reached = mts.session().run(problem.global_step.ref);
        if (!reached.ok()) return fail(ran.status());
        int64_t step = reached->scalar<int64_t>();
        if (step < last_step) {
          return fail(ran.status().with_context(
              fmt::format("the token queue was closed at step {} of {}: synchronous training "
                          "was stopped before its last step",
                          step, last_step)));
        }
        std::cout << fmt::format(
                         "troupe train: {}: synchronous training has ended at step {} (the token "
                         "queue is closed)",
                         worker_device, step)
                  << std::endl;
        break;
      }
      return fail(ran.status());
    }
  }
  if (int signal = stop_signal.load(); signal != 0) {
    // The chief's CheckpointSaverHook saves the step reached as the session closes. A stop
    // during a recovery (a ps lost, say) ends it, and the final save may then be impossible:
    // the line says so, and which checkpoint a restart would resume from.
    std::string at_step;
    (void)mts.run_step_fn([&](Session& session) -> Status {
      TROUPE_ASSIGN_OR_RETURN(Tensor reached, session.run(problem.global_step.ref));
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
  if (sync && !is_chief && steps_run > 0) {
    // The last step is reached. A worker (the chief too) whose step still waits for a token would
    // wait for ever once this one gives no more gradients: a token per replica ends its step,
    // after which it sees the last step. The chief's SyncReplicasHook does the same as its
    // session ends. The queue stays open for workers restarted against the same ps.
    Status released = mts.session().run_targets({sync_optimizer->init_tokens()});
    if (!released.ok()) {
      log_warning("releasing the workers waiting for a token: {}", released.to_string());
    }
  }
  if (is_chief) {
    // The final evaluation survives a lost ps as the training steps do.
    StatusOr<std::vector<std::pair<std::string, double>>> results = Status::OK();
    Status evaluated = mts.run_step_fn([&](Session& session) -> Status {
      TROUPE_ASSIGN_OR_RETURN(Tensor reached, session.run(problem.global_step.ref));
      results = evaluation->evaluate_now(session, reached.scalar<int64_t>(), /*print_line=*/false);
      return results.status();
    });
    if (!evaluated.ok()) return fail(evaluated);
    std::cout << "troupe train: " << problem.describe(*results) << std::endl;
  }
  Status closed = mts.close();
  if (!closed.ok()) return fail(closed);
  return 0;
}

int train_command(const Args& args) {
  return exit_code_of("train", [&] { return run_train(args); });
}

}  // namespace troupe::cli
