// troupe_gpu_bench: the MLP of bench/training_bench.cpp (784-H-H-10, ReLU, softmax cross
// entropy), or the CNN of TensorFlow's tutorial (--model=cnn: conv 5x5 x32 + max pool, conv 5x5
// x64 + max pool, dense 1024, logits; no dropout), trained through a Session on a one-worker
// LocalCluster, its nodes on
// /device:GPU:0 (or /device:CPU:0), batches fed from host memory and the loss fetched every step,
// as a TF1 training loop does. Prints examples/s (the median of --runs runs of --steps steps,
// after 20 warm-up steps) as one JSON line. bench/peers/torch_mlp_cuda.py trains the same model
// the same way on PyTorch CUDA; scripts/gpu-check.sh runs both.
// --towers=k splits each batch in k slices computed by k towers on the device (TensorFlow's
// multi-tower pattern: one set of variables, each tower's gradients, their mean, one update),
// split on the host as the batch arrives there.
//   troupe_gpu_bench [--device=gpu|cpu] [--model=mlp|cnn] [--batch=128] [--hidden=512]
//                    [--optimizer=sgd|adam] [--steps=200] [--runs=5] [--towers=1]
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "troupe/actors/session.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/optimizers.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe {
namespace {

struct Flags {
  std::string device = "gpu";
  std::string model = "mlp";
  int64_t batch = 128;
  int64_t hidden = 512;
  std::string optimizer = "sgd";
  int steps = 200;
  int runs = 5;
  int towers = 1;
};

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) -> std::optional<std::string> {
      std::string prefix = std::string("--") + name + "=";
      if (arg.rfind(prefix, 0) != 0) return std::nullopt;
      return arg.substr(prefix.size());
    };
    if (auto v = value("device")) {
      f.device = *v;
    } else if (auto v = value("model")) {
      f.model = *v;
    } else if (auto v = value("batch")) {
      f.batch = std::stoll(*v);
    } else if (auto v = value("hidden")) {
      f.hidden = std::stoll(*v);
    } else if (auto v = value("optimizer")) {
      f.optimizer = *v;
    } else if (auto v = value("steps")) {
      f.steps = std::stoi(*v);
    } else if (auto v = value("runs")) {
      f.runs = std::stoi(*v);
    } else if (auto v = value("towers")) {
      f.towers = std::stoi(*v);
    } else {
      throw std::invalid_argument("unknown argument " + arg);
    }
  }
  if (f.device != "gpu" && f.device != "cpu") throw std::invalid_argument("--device: gpu or cpu");
  if (f.model != "mlp" && f.model != "cnn") throw std::invalid_argument("--model: mlp or cnn");
  if (f.optimizer != "sgd" && f.optimizer != "adam") {
    throw std::invalid_argument("--optimizer: sgd or adam");
  }
  if (f.towers < 1 || f.batch % f.towers != 0) {
    throw std::invalid_argument("--towers: at least 1, dividing --batch");
  }
  return f;
}

int run(const Flags& f) {
  constexpr int64_t kPixels = 784, kClasses = 10;
  auto cluster = value_or_throw(LocalCluster::start(0, 1));
  Scope root = Scope::new_root();
  Scope scope = root.with_device(f.device == "gpu" ? "/job:worker/task:0/device:GPU:0"
                                                   : "/job:worker/task:0/device:CPU:0");
  auto images =
      ops::Placeholder(scope.with_op_name("images"), DataType::kFloat, PartialShape({-1, kPixels}));
  auto labels =
      ops::Placeholder(scope.with_op_name("labels"), DataType::kInt64, PartialShape({-1}));
  // The variables, made once; `forward` builds the model's loss on them under any scope.
  struct Layer {
    Output weights, biases;
  };
  std::vector<Layer> convs, dense;
  std::vector<int64_t> sizes = {f.hidden, f.hidden, kClasses};
  int64_t width = kPixels;
  if (f.model == "cnn") {
    int64_t depth = 1;
    for (int64_t filters : {32, 64}) {
      Scope s = scope.sub_scope(fmt::format("conv{}", filters));
      convs.push_back(
          {make_variable(s, "weights", glorot_uniform({5, 5, depth, filters}, filters)).ref,
           make_variable(s, "biases", zeros(DataType::kFloat, {filters})).ref});
      depth = filters;
    }
    width = 7 * 7 * 64;
    sizes = {1024, kClasses};
  }
  const int64_t flat_width = width;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Scope s = scope.sub_scope(fmt::format("layer{}", i + 1));
    dense.push_back({make_variable(s, "weights", glorot_uniform({width, sizes[i]}, i + 1)).ref,
                     make_variable(s, "biases", zeros(DataType::kFloat, {sizes[i]})).ref});
    width = sizes[i];
  }
  auto forward = [&](const Scope& at, const Output& x, const Output& y) {
    Output h = x;
    if (f.model == "cnn") {
      const ops::PoolAttrs pool{.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"};
      h = ops::Reshape(at, x, Tensor::from_vector<int64_t>({-1, 28, 28, 1}));
      for (size_t c = 0; c < convs.size(); ++c) {
        Scope s = at.sub_scope(c == 0 ? "conv32" : "conv64");
        h = ops::Conv2D(s, h, convs[c].weights, {.padding = "SAME"});
        h = ops::MaxPool(s, ops::Relu(s, ops::BiasAdd(s, h, convs[c].biases)), pool);
      }
      h = ops::Reshape(at, h, Tensor::from_vector<int64_t>({-1, flat_width}));
    }
    for (size_t i = 0; i < dense.size(); ++i) {
      Scope s = at.sub_scope(fmt::format("layer{}", i + 1));
      h = ops::BiasAdd(s, ops::MatMul(s, h, dense[i].weights), dense[i].biases);
      if (i + 1 < dense.size()) h = ops::Relu(s, h);
    }
    return ops::Mean(at, ops::SparseSoftmaxCrossEntropyWithLogits(at, h, y).loss,
                     Tensor::from_vector<int32_t>({0}));
  };
  std::unique_ptr<Optimizer> optimizer;
  if (f.optimizer == "sgd") optimizer = std::make_unique<GradientDescentOptimizer>(0.01);
  if (f.optimizer == "adam") optimizer = std::make_unique<AdamOptimizer>(0.001);
  Output loss;
  Operation train;
  if (f.towers == 1) {
    loss = forward(scope, images, labels);
    train = value_or_throw(optimizer->minimize(scope, loss));
  } else {
    // The batch split on the host, where it is fed; tower i on the device, under "tower_i".
    Scope host = root.with_device("/job:worker/task:0/device:CPU:0");
    std::vector<Output> image_slices = ops::Split(host, 0, images, f.towers);
    std::vector<Output> label_slices = ops::Split(host, 0, labels, f.towers);
    std::vector<std::vector<GradientAndVariable>> per_tower;
    std::vector<Input> losses;
    for (int i = 0; i < f.towers; ++i) {
      Scope tower = scope.sub_scope(fmt::format("tower_{}", i));
      Output tower_loss = forward(tower, image_slices[i], label_slices[i]);
      losses.push_back(tower_loss);
      per_tower.push_back(value_or_throw(optimizer->compute_gradients(tower, tower_loss)));
    }
    const float share = 1.0f / static_cast<float>(f.towers);
    Scope average = scope.sub_scope("average_gradients");
    std::vector<GradientAndVariable> averaged;
    for (size_t v = 0; v < per_tower[0].size(); ++v) {
      std::vector<Input> grads;
      for (const auto& tower : per_tower)
        grads.push_back(to_dense(average, tower[v].gradient));
      averaged.push_back({Gradient(ops::Mul(average, ops::AddN(average, grads), share)),
                          per_tower[0][v].variable});
    }
    loss = ops::Mul(scope.with_op_name("loss"), ops::AddN(scope, losses), share);
    train = value_or_throw(optimizer->apply_gradients(scope, averaged));
  }
  Session session = value_or_throw(Session::create(value_or_throw(cluster->target("worker", 0))));
  throw_if_error(session.run_targets({global_variables_initializer(root)}));

  // A few synthetic batches in host memory, fed in turn.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> pixel(0.f, 1.f);
  std::vector<std::pair<Tensor, Tensor>> batches;
  for (int b = 0; b < 4; ++b) {
    Tensor x(DataType::kFloat, TensorShape{f.batch, kPixels});
    for (float& v : x.flat<float>())
      v = pixel(rng);
    Tensor y(DataType::kInt64, TensorShape{f.batch});
    for (int64_t& v : y.flat<int64_t>())
      v = static_cast<int64_t>(rng() % kClasses);
    batches.emplace_back(std::move(x), std::move(y));
  }
  int64_t step = 0;
  float last_loss = 0;
  auto one_step = [&] {
    const auto& [x, y] = batches[step++ % batches.size()];
    auto out = value_or_throw(session.run({{images, x}, {labels, y}}, {loss}, {train}));
    last_loss = out[0].scalar<float>();
  };
  for (int i = 0; i < 20; ++i)
    one_step();
  std::vector<double> rates;
  for (int r = 0; r < f.runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < f.steps; ++i)
      one_step();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(static_cast<double>(f.batch) * f.steps / seconds);
  }
  std::sort(rates.begin(), rates.end());
  fmt::print(
      "{{\"peer\": \"troupe\", \"device\": \"{}\", \"model\": \"{}\", \"batch\": {}, "
      "\"hidden\": {}, "
      "\"optimizer\": \"{}\", \"towers\": {}, \"examples_per_s\": {:.0f}, \"min\": {:.0f}, "
      "\"max\": {:.0f}, \"last_loss\": {:.4f}}}\n",
      f.device, f.model, f.batch, f.hidden, f.optimizer, f.towers, rates[rates.size() / 2],
      rates.front(), rates.back(), last_loss);
  return 0;
}

}  // namespace
}  // namespace troupe

int main(int argc, char** argv) {
  try {
    return troupe::run(troupe::parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "troupe_gpu_bench: " << e.what() << "\n";
    return 1;
  }
}
