// What the GPU device offers, checked without a GPU in every build with CUDA: a kernel for each
// op of the MLP's training step, and placement on it (soft placement to the CPU for an op it
// has no kernel for, an error naming the op without). Skipped in builds without CUDA.
#include <fmt/format.h>

#include <set>

#include "status_checks.hpp"
#include "troupe/devices/gpu/gpu_runtime.hpp"
#include "troupe/devices/kernel_registry.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/optimizers.hpp"
#include "troupe/graph/placement.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe {
namespace {

// Boost.Test's precondition: the suite runs only in a build with CUDA.
boost::test_tools::assertion_result built_with_cuda_gpu_device(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result built(built_with_cuda());
  if (!built_with_cuda()) built.message() << "skipped: built without CUDA";
  return built;
}

constexpr const char* kCpu0 = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr const char* kGpu0 = "/job:worker/replica:0/task:0/device:GPU:0";

PlacementOptions worker_with_a_gpu(bool soft) {
  PlacementOptions options;
  options.devices = {kCpu0, kGpu0};
  options.default_device = value_or_throw(DeviceName::parse("/job:worker/replica:0/task:0"));
  options.has_kernel = [](const std::string& op, const std::string& type) {
    return KernelRegistry::global().has_kernel(op, type);
  };
  options.allow_soft_placement = soft;
  return options;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_registry, *boost::unit_test::precondition(built_with_cuda_gpu_device))

BOOST_AUTO_TEST_CASE(every_op_of_an_mlp_training_step_has_a_gpu_kernel) {
  for (std::string optimizer : {"sgd", "momentum", "adagrad", "adam"}) {
    Scope s = Scope::new_root();
    auto x = ops::Placeholder(s, DataType::kFloat);
    auto y = ops::Placeholder(s, DataType::kInt64);
    auto w = make_variable(s, "w", ops::Fill(s, Tensor::from_vector<int32_t>({20, 4}), 0.1f));
    auto b = make_variable(s, "b",
                           ops::ZerosLike(s, ops::Fill(s, Tensor::from_vector<int32_t>({4}), 0.f)));
    auto logits = ops::BiasAdd(s, ops::Relu(s, ops::MatMul(s, x, w.ref)), b.ref);
    auto loss = ops::Mean(s, ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, y).loss,
                          Tensor::from_vector<int32_t>({0}));
    auto step = make_variable(s, "global_step", Tensor(int64_t{0}), false);
    std::unique_ptr<Optimizer> opt;
    if (optimizer == "sgd") opt = std::make_unique<GradientDescentOptimizer>(0.1);
    if (optimizer == "momentum") opt = std::make_unique<MomentumOptimizer>(0.1, 0.9);
    if (optimizer == "adagrad") opt = std::make_unique<AdagradOptimizer>(0.1);
    if (optimizer == "adam") opt = std::make_unique<AdamOptimizer>(0.1);
    auto train = opt->minimize(s, loss, step.ref);
    BOOST_REQUIRE_MESSAGE(train.ok(), train.status().to_string());
    auto accuracy =
        ops::Mean(s, ops::Cast(s, ops::Equal(s, ops::ArgMax(s, logits, 1), y), DataType::kFloat),
                  Tensor::from_vector<int32_t>({0}));
    (void)accuracy;
    std::set<std::string> missing;
    const Graph& graph = s.graph();
    for (int id = 0; id < graph.num_nodes(); ++id) {
      if (!KernelRegistry::global().has_kernel(graph.node(id).op_name(), "GPU")) {
        missing.insert(graph.node(id).op_name());
      }
    }
    std::string names;
    for (const auto& m : missing)
      names += m + " ";
    BOOST_TEST(missing.empty(), optimizer << ": ops with no GPU kernel: " << names);
  }
}

BOOST_AUTO_TEST_CASE(every_op_of_a_cnn_training_step_has_a_gpu_kernel) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kFloat);
  auto y = ops::Placeholder(s, DataType::kInt64);
  auto k = make_variable(s, "k", ops::Fill(s, Tensor::from_vector<int32_t>({5, 5, 1, 4}), 0.1f));
  auto w =
      make_variable(s, "w", ops::Fill(s, Tensor::from_vector<int32_t>({14 * 14 * 4, 10}), 0.1f));
  const ops::PoolAttrs pool{.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"};
  Output h = ops::Reshape(s, x, Tensor::from_vector<int64_t>({-1, 28, 28, 1}));
  h = ops::MaxPool(s, ops::Relu(s, ops::Conv2D(s, h, k.ref, {.padding = "SAME"})), pool);
  h = ops::Reshape(s, h, Tensor::from_vector<int64_t>({-1, 14 * 14 * 4}));
  auto loss =
      ops::Mean(s, ops::SparseSoftmaxCrossEntropyWithLogits(s, ops::MatMul(s, h, w.ref), y).loss,
                Tensor::from_vector<int32_t>({0}));
  auto step = make_variable(s, "global_step", Tensor(int64_t{0}), false);
  auto train = AdamOptimizer(0.01).minimize(s, loss, step.ref);
  BOOST_REQUIRE_MESSAGE(train.ok(), train.status().to_string());
  std::set<std::string> missing;
  const Graph& graph = s.graph();
  for (int id = 0; id < graph.num_nodes(); ++id) {
    if (!KernelRegistry::global().has_kernel(graph.node(id).op_name(), "GPU")) {
      missing.insert(graph.node(id).op_name());
    }
  }
  BOOST_TEST(missing.empty(),
             "ops with no GPU kernel: " << fmt::format("{}", fmt::join(missing, " ")));
}

BOOST_AUTO_TEST_CASE(every_float_op_of_an_embedding_models_training_step_has_a_gpu_kernel) {
  // The rows the step touches are gathered, their gradients stay sparse (IndexedSlices) and
  // only those rows are updated; the int ops around them (indices, shapes, Unique for the
  // optimizers that sum duplicate rows first) run on the host, as TensorFlow's HostMemory ones.
  for (std::string optimizer : {"sgd", "momentum", "adagrad", "adam"}) {
    Scope s = Scope::new_root();
    auto ids = ops::Placeholder(s, DataType::kInt64);
    auto y = ops::Placeholder(s, DataType::kInt64);
    auto table =
        make_variable(s, "table", ops::Fill(s, Tensor::from_vector<int32_t>({100, 8}), 0.1f));
    auto w = make_variable(s, "w", ops::Fill(s, Tensor::from_vector<int32_t>({8, 3}), 0.1f));
    auto rows = ops::GatherV2(s, table.ref, ids, int32_t{0});
    auto loss = ops::Mean(
        s, ops::SparseSoftmaxCrossEntropyWithLogits(s, ops::MatMul(s, rows, w.ref), y).loss,
        Tensor::from_vector<int32_t>({0}));
    auto step = make_variable(s, "global_step", Tensor(int64_t{0}), false);
    std::unique_ptr<Optimizer> opt;
    if (optimizer == "sgd") opt = std::make_unique<GradientDescentOptimizer>(0.1);
    if (optimizer == "momentum") opt = std::make_unique<MomentumOptimizer>(0.1, 0.9);
    if (optimizer == "adagrad") opt = std::make_unique<AdagradOptimizer>(0.1);
    if (optimizer == "adam") opt = std::make_unique<AdamOptimizer>(0.1);
    auto train = opt->minimize(s, loss, step.ref);
    BOOST_REQUIRE_MESSAGE(train.ok(), train.status().to_string());
    std::set<std::string> missing, ops_seen;
    const Graph& graph = s.graph();
    for (int id = 0; id < graph.num_nodes(); ++id) {
      const Node& node = graph.node(id);
      ops_seen.insert(node.op_name());
      bool float_output = false;
      for (int i = 0; i < node.num_outputs(); ++i)
        float_output = float_output || node.output_type(i) == DataType::kFloat;
      if (float_output && !KernelRegistry::global().has_kernel(node.op_name(), "GPU")) {
        missing.insert(node.op_name());
      }
    }
    BOOST_TEST(ops_seen.count("GatherV2") == 1);
    BOOST_TEST(missing.empty(), optimizer << ": float ops with no GPU kernel: "
                                          << fmt::format("{}", fmt::join(missing, " ")));
  }
}

BOOST_AUTO_TEST_CASE(gpus_are_preferred_and_soft_placement_falls_back_to_the_cpu) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s.with_op_name("x"), DataType::kFloat);
  auto product = ops::MatMul(s.with_op_name("product"), x, x);
  auto unique = ops::Unique(s.with_op_name("unique").with_device("/device:GPU:0"),
                            Tensor::from_vector<int32_t>({1, 2, 1}));
  (void)product;
  (void)unique;
  auto placed = place(s.graph(), worker_with_a_gpu(/*soft=*/true));
  BOOST_REQUIRE_MESSAGE(placed.ok(), placed.status().to_string());
  const Graph& graph = s.graph();
  BOOST_TEST(placed->at(graph.find("product")->id()) == kGpu0);
  BOOST_TEST(placed->at(graph.find("unique")->id()) == kCpu0);
  testing::check_error(place(s.graph(), worker_with_a_gpu(/*soft=*/false)).status(),
                       Code::kInvalidArgument, "Unique");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
