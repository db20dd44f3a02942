// The GPU device's kernels against the CPU kernels, on random inputs (float32 tolerance), and an
// MLP trained on each device. Needs a GPU: without one (or in a build without CUDA) the suite
// is skipped, saying why. What needs no GPU, kernel coverage and placement, is in
// gpu_registry_test.cpp.
#include <cmath>
#include <random>

#include "devices/run_graph.hpp"
#include "troupe/devices/gpu/gpu_runtime.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/gradients.hpp"
#include "troupe/graph/optimizers.hpp"
#include "troupe/graph/variables.hpp"
#ifdef TROUPE_HAVE_CUDA
#include "troupe/devices/gpu/cudnn_convolution.hpp"
#include "troupe/devices/gpu/gpu_context.hpp"
#endif

namespace troupe {
namespace {

using testing::Feed;
using testing::run_graph;

// Boost.Test's precondition: the suite runs only where a GPU is.
boost::test_tools::assertion_result has_gpu(boost::unit_test::test_unit_id) {
  if (gpu_count() > 0) return true;
  boost::test_tools::assertion_result skipped(false);
  skipped.message() << "skipped: no GPU (" << why_no_gpu() << ")";
  return skipped;
}

#ifdef TROUPE_HAVE_CUDA

// A CPU device and a GPU device, to run the same graph on both.
struct Devices {
  Device cpu{"/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 2};
  Device gpu{"/job:localhost/replica:0/task:0/device:GPU:0", value_or_throw(open_gpu(0)), 1};
};

Tensor random_tensor(const TensorShape& shape, std::mt19937& rng, float low = -1.f,
                     float high = 1.f) {
  Tensor t(DataType::kFloat, shape);
  std::uniform_real_distribution<float> uniform(low, high);
  for (float& v : t.flat<float>())
    v = uniform(rng);
  return t;
}

// Fails the test unless `a` and `b` have one shape and elements within float tolerance.
void check_close(const Tensor& a, const Tensor& b, const std::string& what,
                 double tolerance = 1e-4) {
  BOOST_TEST_REQUIRE(a.on_host());
  BOOST_TEST_REQUIRE(b.on_host());
  BOOST_TEST_REQUIRE(a.shape().to_string() == b.shape().to_string(), what);
  BOOST_TEST_REQUIRE(dtype_name(a.dtype()) == dtype_name(b.dtype()), what);
  if (a.dtype() != DataType::kFloat) {
    BOOST_TEST(std::memcmp(a.raw_data(), b.raw_data(), a.total_bytes()) == 0, what);
    return;
  }
  auto x = a.flat<float>(), y = b.flat<float>();
  int bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double scale = std::max(1.0, std::abs(static_cast<double>(x[i])));
    if (!(std::abs(x[i] - y[i]) <= tolerance * scale) && bad++ < 3) {
      BOOST_ERROR(what << ": element " << i << ": CPU " << x[i] << ", GPU " << y[i]);
    }
  }
}

// Runs `fetches` on the CPU and on the GPU and compares every fetched value.
void compare(const Scope& s, const std::vector<Output>& fetches, const std::vector<Feed>& feeds,
             const std::string& what, double tolerance = 1e-4) {
  Devices devices;
  auto on_cpu = run_graph(s, fetches, feeds, {}, &devices.cpu);
  BOOST_REQUIRE_MESSAGE(on_cpu.ok(), what << " on the CPU: " << on_cpu.status().to_string());
  auto on_gpu = run_graph(s, fetches, feeds, {}, &devices.gpu);
  BOOST_REQUIRE_MESSAGE(on_gpu.ok(), what << " on the GPU: " << on_gpu.status().to_string());
  for (size_t i = 0; i < fetches.size(); ++i)
    check_close(on_cpu->at(i), on_gpu->at(i), what + " output " + std::to_string(i), tolerance);
}

#endif  // TROUPE_HAVE_CUDA

}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_kernels, *boost::unit_test::precondition(has_gpu))

#ifdef TROUPE_HAVE_CUDA

BOOST_AUTO_TEST_CASE(unary_ops_match_the_cpu) {
  std::mt19937 rng(1);
  using Unary = Output (*)(const Scope&, const Input&);
  const std::vector<std::pair<std::string, Unary>> ops_list = {
      {"Neg", ops::Neg},   {"Square", ops::Square}, {"Sqrt", ops::Sqrt}, {"Rsqrt", ops::Rsqrt},
      {"Exp", ops::Exp},   {"Log", ops::Log},       {"Tanh", ops::Tanh}, {"Sigmoid", ops::Sigmoid},
      {"Relu", ops::Relu}, {"Abs", ops::Abs}};
  for (const auto& [name, op] : ops_list) {
    Scope s = Scope::new_root();
    auto x = ops::Placeholder(s, DataType::kFloat);
    const bool positive = name == "Sqrt" || name == "Rsqrt" || name == "Log";
    Tensor input = random_tensor({37, 41}, rng, positive ? 0.1f : -3.f, 3.f);
    compare(s, {op(s, x)}, {{x, input}}, name);
  }
}

BOOST_AUTO_TEST_CASE(binary_ops_broadcast_as_the_cpu) {
  std::mt19937 rng(2);
  using Binary = Output (*)(const Scope&, const Input&, const Input&);
  const std::vector<std::pair<std::string, Binary>> ops_list = {
      {"Add", ops::Add},
      {"Sub", ops::Sub},
      {"Mul", ops::Mul},
      {"Div", ops::Div},
      {"Maximum", ops::Maximum},
      {"Minimum", ops::Minimum},
      {"SquaredDifference", ops::SquaredDifference}};
  const std::vector<std::pair<TensorShape, TensorShape>> shapes = {{{4, 5}, {4, 5}},
                                                                   {{4, 5}, {5}},
                                                                   {{4, 1}, {1, 5}},
                                                                   {{}, {3, 2}},
                                                                   {{3, 2}, {}},
                                                                   {{2, 3, 4}, {3, 1}},
                                                                   {{7, 1, 3, 1}, {1, 5, 1, 2}}};
  for (const auto& [name, op] : ops_list) {
    for (const auto& [sa, sb] : shapes) {
      Scope s = Scope::new_root();
      auto a = ops::Placeholder(s, DataType::kFloat);
      auto b = ops::Placeholder(s, DataType::kFloat);
      compare(s, {op(s, a, b)},
              {{a, random_tensor(sa, rng)}, {b, random_tensor(sb, rng, 0.5f, 2.f)}},
              name + " " + sa.to_string() + " " + sb.to_string());
    }
  }
}

BOOST_AUTO_TEST_CASE(activation_gradients_match_the_cpu) {
  std::mt19937 rng(3);
  Scope s = Scope::new_root();
  auto g = ops::Placeholder(s, DataType::kFloat);
  auto x = ops::Placeholder(s, DataType::kFloat);
  std::vector<Feed> feeds = {{g, random_tensor({9, 33}, rng)}, {x, random_tensor({9, 33}, rng)}};
  compare(s, {ops::ReluGrad(s, g, x), ops::SigmoidGrad(s, x, g), ops::TanhGrad(s, x, g)}, feeds,
          "activation gradients");
}

BOOST_AUTO_TEST_CASE(matmul_matches_the_cpu_with_every_transpose) {
  std::mt19937 rng(4);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Scope s = Scope::new_root();
      auto a = ops::Placeholder(s, DataType::kFloat);
      auto b = ops::Placeholder(s, DataType::kFloat);
      TensorShape sa = ta ? TensorShape{53, 37} : TensorShape{37, 53};
      TensorShape sb = tb ? TensorShape{29, 53} : TensorShape{53, 29};
      compare(s, {ops::MatMul(s, a, b, {.transpose_a = ta, .transpose_b = tb})},
              {{a, random_tensor(sa, rng)}, {b, random_tensor(sb, rng)}},
              fmt::format("MatMul transpose_a={} transpose_b={}", ta, tb));
    }
  }
}

BOOST_AUTO_TEST_CASE(bias_and_reductions_match_the_cpu) {
  std::mt19937 rng(5);
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kFloat);
  auto b = ops::Placeholder(s, DataType::kFloat);
  auto y = ops::Placeholder(s, DataType::kFloat);
  std::vector<Feed> feeds = {{x, random_tensor({2, 3, 4, 5}, rng)},
                             {b, random_tensor({5}, rng)},
                             {y, random_tensor({6, 7, 8}, rng)}};
  std::vector<Output> fetches = {ops::BiasAdd(s, x, b), ops::BiasAddGrad(s, x)};
  for (std::vector<int32_t> axes : std::vector<std::vector<int32_t>>{
           {0}, {1}, {2}, {-1}, {0, 1}, {1, 2}, {0, 2}, {0, 1, 2}, {}}) {
    for (bool keep : {false, true}) {
      Tensor a = Tensor::from_vector(axes);
      fetches.push_back(ops::Sum(s, y, a, {.keep_dims = keep}));
      fetches.push_back(ops::Mean(s, y, a, {.keep_dims = keep}));
    }
  }
  compare(s, fetches, feeds, "bias and reductions");
}

BOOST_AUTO_TEST_CASE(softmax_and_its_cross_entropy_match_the_cpu) {
  std::mt19937 rng(6);
  for (int64_t classes : {3, 10, 1000}) {
    Scope s = Scope::new_root();
    auto logits = ops::Placeholder(s, DataType::kFloat);
    auto labels64 = ops::Placeholder(s, DataType::kInt64);
    auto labels32 = ops::Placeholder(s, DataType::kInt32);
    std::vector<int64_t> l64;
    std::vector<int32_t> l32;
    for (int i = 0; i < 17; ++i) {
      l64.push_back(static_cast<int64_t>(rng() % classes));
      l32.push_back(static_cast<int32_t>(rng() % classes));
    }
    auto xent64 = ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, labels64);
    auto xent32 = ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, labels32);
    compare(s,
            {ops::Softmax(s, logits), xent64.loss, xent64.backprop, xent32.loss, xent32.backprop},
            {{logits, random_tensor({17, classes}, rng, -5.f, 5.f)},
             {labels64, Tensor::from_vector(l64)},
             {labels32, Tensor::from_vector(l32)}},
            fmt::format("softmax, {} classes", classes));
  }
}

BOOST_AUTO_TEST_CASE(an_out_of_range_label_gives_nan_in_its_row_as_tensorflow_on_gpu) {
  Devices devices;
  Scope s = Scope::new_root();
  auto logits =
      ops::Const(s, Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}).reshaped({2, 3}).value());
  auto xent =
      ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, Tensor::from_vector<int64_t>({1, 7}));
  auto out = run_graph(s, {xent.loss}, {}, {}, &devices.gpu);
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(std::isfinite(out->at(0).flat<float>()[0]));
  BOOST_TEST(std::isnan(out->at(0).flat<float>()[1]));
}

BOOST_AUTO_TEST_CASE(fills_broadcasts_and_sums_match_the_cpu) {
  std::mt19937 rng(7);
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kFloat);
  auto y = ops::Placeholder(s, DataType::kFloat);
  auto v = ops::Placeholder(s, DataType::kFloat);
  compare(s,
          {ops::ZerosLike(s, x), ops::OnesLike(s, x),
           ops::Fill(s, Tensor::from_vector<int32_t>({3, 4}), v),
           ops::BroadcastTo(s, y, Tensor::from_vector<int32_t>({5, 4, 3})),
           ops::AddN(s, {x, x, ops::Neg(s, x)})},
          {{x, random_tensor({6, 5}, rng)}, {y, random_tensor({4, 1}, rng)}, {v, Tensor(2.5f)}},
          "fills and broadcasts");
}

BOOST_AUTO_TEST_CASE(optimizer_updates_match_the_cpu) {
  std::mt19937 rng(8);
  Tensor initial = random_tensor({13, 7}, rng);
  Tensor grad = random_tensor({13, 7}, rng);
  for (std::string kind : {"GradientDescent", "Momentum", "Adagrad", "Adam"}) {
    Devices devices;
    std::vector<Tensor> results;
    for (Device* device : {&devices.cpu, &devices.gpu}) {
      Scope s = Scope::new_root();
      auto var = ops::Variable(s.with_op_name("var"), PartialShape({13, 7}), DataType::kFloat);
      auto slot1 = ops::Variable(s.with_op_name("slot1"), PartialShape({13, 7}), DataType::kFloat);
      auto slot2 = ops::Variable(s.with_op_name("slot2"), PartialShape({13, 7}), DataType::kFloat);
      auto g = ops::Placeholder(s, DataType::kFloat);
      auto init = ops::NoOp(s.with_control_dependencies(
          {ops::Assign(s, var, initial).op(),
           ops::Assign(s, slot1, ops::Fill(s, Tensor::from_vector<int32_t>({13, 7}), 0.1f)).op(),
           ops::Assign(s, slot2, ops::Fill(s, Tensor::from_vector<int32_t>({13, 7}), 0.2f)).op()}));
      Output update;
      if (kind == "GradientDescent") update = ops::ApplyGradientDescent(s, var, 0.1f, g);
      if (kind == "Momentum") update = ops::ApplyMomentum(s, var, slot1, 0.1f, g, 0.9f, true);
      if (kind == "Adagrad") update = ops::ApplyAdagrad(s, var, slot1, 0.1f, g);
      if (kind == "Adam") {
        update = ops::ApplyAdam(s, var, slot1, slot2, 0.9f, 0.99f, 0.01f, 0.9f, 0.999f, 1e-8f, g);
      }
      BOOST_REQUIRE(run_graph(s, {}, {}, {init}, device).ok());
      for (int step = 0; step < 3; ++step) {
        auto r = run_graph(s, {}, {{g, grad}}, {update.op()}, device);
        BOOST_REQUIRE_MESSAGE(r.ok(), kind << ": " << r.status().to_string());
      }
      auto values = run_graph(s, {ops::Identity(s, var), ops::Identity(s, slot1)}, {}, {}, device);
      BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
      results.insert(results.end(), values->begin(), values->end());
    }
    check_close(results[0], results[2], kind + " variable");
    check_close(results[1], results[3], kind + " slot");
  }
}

BOOST_AUTO_TEST_CASE(an_mlp_trains_on_the_gpu_as_on_the_cpu) {
  std::mt19937 rng(9);
  Tensor images = random_tensor({64, 20}, rng);
  Tensor labels(DataType::kInt64, TensorShape{64});
  for (auto& l : labels.flat<int64_t>())
    l = static_cast<int64_t>(rng() % 4);
  Tensor w1 = random_tensor({20, 32}, rng, -0.3f, 0.3f),
         w2 = random_tensor({32, 4}, rng, -0.3f, 0.3f);
  Devices devices;
  std::vector<std::vector<float>> losses(2);
  int d = 0;
  for (Device* device : {&devices.cpu, &devices.gpu}) {
    Scope s = Scope::new_root();
    auto x = ops::Placeholder(s, DataType::kFloat);
    auto y = ops::Placeholder(s, DataType::kInt64);
    auto v1 = make_variable(s, "w1", w1);
    auto b1 = make_variable(s, "b1", Tensor::from_vector<float>(std::vector<float>(32, 0.f)));
    auto v2 = make_variable(s, "w2", w2);
    auto b2 = make_variable(s, "b2", Tensor::from_vector<float>(std::vector<float>(4, 0.f)));
    auto hidden = ops::Relu(s, ops::BiasAdd(s, ops::MatMul(s, x, v1.ref), b1.ref));
    auto logits = ops::BiasAdd(s, ops::MatMul(s, hidden, v2.ref), b2.ref);
    auto loss = ops::Mean(s, ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, y).loss,
                          Tensor::from_vector<int32_t>({0}));
    auto step = make_variable(s, "global_step", Tensor(int64_t{0}), false);
    auto train = AdamOptimizer(0.01).minimize(s, loss, step.ref);
    BOOST_REQUIRE_MESSAGE(train.ok(), train.status().to_string());
    BOOST_REQUIRE(run_graph(s, {}, {}, {global_variables_initializer(s)}, device).ok());
    for (int i = 0; i < 20; ++i) {
      auto r = run_graph(s, {loss}, {{x, images}, {y, labels}}, {*train}, device);
      BOOST_REQUIRE_MESSAGE(r.ok(), device->name() << ": " << r.status().to_string());
      losses[d].push_back(r->at(0).scalar<float>());
    }
    auto final_step = run_graph(s, {ops::Identity(s, step.ref)}, {}, {}, device);
    BOOST_REQUIRE(final_step.ok());
    BOOST_TEST(final_step->at(0).scalar<int64_t>() == 20);
    ++d;
  }
  for (int i = 0; i < 20; ++i)
    BOOST_TEST(std::abs(losses[0][i] - losses[1][i]) <= 1e-3 * std::max(1.f, losses[0][i]),
               "step " << i << ": CPU loss " << losses[0][i] << ", GPU " << losses[1][i]);
  BOOST_TEST(losses[1].back() < losses[1].front());
}

BOOST_AUTO_TEST_CASE(convolutions_and_their_gradients_match_the_cpu) {
  std::mt19937 rng(11);
  struct Case {
    TensorShape input, filter;
    ops::ConvAttrs attrs;
  };
  const std::vector<Case> cases = {
      {{2, 9, 8, 3}, {3, 3, 3, 5}, {.strides = {1, 1, 1, 1}, .padding = "SAME"}},
      {{2, 9, 8, 3}, {5, 5, 3, 4}, {.strides = {1, 2, 2, 1}, .padding = "VALID"}},
      {{3, 10, 11, 2}, {2, 3, 2, 6}, {.strides = {1, 2, 3, 1}, .padding = "SAME"}},
      {{1, 7, 7, 2}, {3, 3, 2, 2}, {.padding = "SAME", .dilations = {1, 2, 2, 1}}},
      // More than one 32 x 32 tile of the NCHW transposes each way.
      {{3, 9, 9, 40}, {3, 3, 40, 36}, {.strides = {1, 1, 1, 1}, .padding = "SAME"}}};
#ifdef TROUPE_HAVE_CUDNN
  // cuDNN's graph API and its legacy API, each in each layout the kernels may choose (NCHW:
  // the inputs transposed and the output back), then as the measurements choose.
  struct Restore {
    ~Restore() {
      set_cudnn_layouts_for_testing(CudnnLayouts::kMeasureBoth);
      set_cudnn_api_for_testing(CudnnApi::kByEnvironment);
    }
  } restore;
  std::vector<std::pair<CudnnApi, CudnnLayouts>> layouts;
  for (CudnnApi api : {CudnnApi::kOnlyGraph, CudnnApi::kOnlyLegacy}) {
    for (CudnnLayouts layout : {CudnnLayouts::kOnlyNhwc, CudnnLayouts::kOnlyNchw})
      layouts.emplace_back(api, layout);
  }
  layouts.emplace_back(CudnnApi::kByEnvironment, CudnnLayouts::kMeasureBoth);
#else
  const std::vector<std::pair<int, int>> layouts = {{0, 0}};
#endif
  for (auto [api, layout] : layouts) {
#ifdef TROUPE_HAVE_CUDNN
    set_cudnn_layouts_for_testing(layout);
    set_cudnn_api_for_testing(api);
#endif
    for (const Case& c : cases) {
      Scope s = Scope::new_root();
      auto x = ops::Placeholder(s, DataType::kFloat);
      auto w = ops::Placeholder(s, DataType::kFloat);
      auto y = ops::Conv2D(s, x, w, c.attrs);
      auto r = ops::Placeholder(s, DataType::kFloat);
      auto grads = value_or_throw(add_gradients(
          s, {ops::Sum(s, ops::Mul(s, y, r), Tensor::from_vector<int32_t>({0, 1, 2, 3}))}, {x, w}));
      Tensor input = random_tensor(c.input, rng), filter = random_tensor(c.filter, rng);
      // The output's shape, from a CPU run, for the weights of the sum.
      Tensor out = testing::run_one(s, y, {{x, input}, {w, filter}});
      compare(s, {y, grads[0], grads[1]},
              {{x, input}, {w, filter}, {r, random_tensor(out.shape(), rng)}},
              "Conv2D " + c.input.to_string() + " * " + c.filter.to_string() + " " +
                  c.attrs.padding + " api " + std::to_string(static_cast<int>(api)) + " layouts " +
                  std::to_string(static_cast<int>(layout)));
    }
  }
}

BOOST_AUTO_TEST_CASE(gathers_segment_sums_and_batched_products_match_the_cpu) {
  std::mt19937 rng(13);
  const Tensor params = random_tensor({6, 4, 3}, rng);
  for (int axis : {0, 1, 2}) {
    for (DataType index_type : {DataType::kInt32, DataType::kInt64}) {
      Scope s = Scope::new_root();
      auto p = ops::Placeholder(s, DataType::kFloat);
      auto i = ops::Placeholder(s, index_type);
      auto y = ops::GatherV2(s, p, i, int32_t{axis});
      const std::vector<int64_t> at = {2, 0, 2, 1, 0, 1};  // repeated rows, every dim >= 3
      Tensor indices = index_type == DataType::kInt64
                           ? value_or_throw(Tensor::from_vector<int64_t>(at, TensorShape{2, 3}))
                           : value_or_throw(Tensor::from_vector<int32_t>(
                                 std::vector<int32_t>(at.begin(), at.end()), TensorShape{2, 3}));
      compare(s, {y}, {{p, params}, {i, indices}},
              "GatherV2 axis " + std::to_string(axis) + " " + std::string(dtype_name(index_type)));
    }
  }
  {
    Scope s = Scope::new_root();
    auto data = ops::Placeholder(s, DataType::kFloat);
    auto ids = ops::Placeholder(s, DataType::kInt32);
    auto sums = ops::UnsortedSegmentSum(s, data, ids, int32_t{4});
    compare(s, {sums},
            {{data, random_tensor({6, 4}, rng)},
             {ids, Tensor::from_vector<int32_t>({0, 2, -1, 2, 3, 0})}},
            "UnsortedSegmentSum (a negative id dropped)");
    compare(s, {sums},
            {{data, random_tensor({2, 3, 5}, rng)},
             {ids, value_or_throw(Tensor::from_vector<int32_t>({3, 1, 1, 0, 3, 3}, {2, 3}))}},
            "UnsortedSegmentSum (ids of rank 2)");
  }
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      Scope s = Scope::new_root();
      auto x = ops::Placeholder(s, DataType::kFloat);
      auto y = ops::Placeholder(s, DataType::kFloat);
      auto z = ops::BatchMatMul(s, x, y, adj_x, adj_y);
      compare(s, {z},
              {{x, random_tensor(adj_x ? TensorShape{2, 3, 5, 4} : TensorShape{2, 3, 4, 5}, rng)},
               {y, random_tensor(adj_y ? TensorShape{2, 3, 6, 5} : TensorShape{2, 3, 5, 6}, rng)}},
              "BatchMatMul adj_x " + std::to_string(adj_x) + " adj_y " + std::to_string(adj_y));
    }
  }
}

BOOST_AUTO_TEST_CASE(an_index_out_of_range_is_invalid_argument_on_the_gpu_as_on_the_cpu) {
  std::mt19937 rng(15);
  auto expect_invalid = [](const StatusOr<std::vector<Tensor>>& r, const std::string& what,
                           const std::string& message) {
    BOOST_REQUIRE_MESSAGE(!r.ok(), what << " succeeded");
    BOOST_TEST((r.status().code() == Code::kInvalidArgument),
               what << ": " << r.status().to_string());
    BOOST_TEST(r.status().message().find(message) != std::string::npos,
               what << ": " << r.status().to_string());
  };
  Devices devices;
  {
    Scope s = Scope::new_root();
    auto p = ops::Placeholder(s, DataType::kFloat);
    auto i = ops::Placeholder(s, DataType::kInt64);
    auto y = ops::GatherV2(s, p, i, int32_t{0});
    expect_invalid(
        run_graph(s, {y},
                  {{p, random_tensor({6, 2}, rng)}, {i, Tensor::from_vector<int64_t>({1, 99})}}, {},
                  &devices.gpu),
        "GatherV2", "indices[1] = 99 is not in [0, 6)");
  }
  {
    Scope s = Scope::new_root();
    auto data = ops::Placeholder(s, DataType::kFloat);
    auto ids = ops::Placeholder(s, DataType::kInt32);
    auto sums = ops::UnsortedSegmentSum(s, data, ids, int32_t{3});
    expect_invalid(
        run_graph(s, {sums},
                  {{data, random_tensor({2, 2}, rng)}, {ids, Tensor::from_vector<int32_t>({0, 3})}},
                  {}, &devices.gpu),
        "UnsortedSegmentSum", "segment_ids[1] = 3 is out of range [0, 3)");
  }
  for (bool sparse_apply : {false, true}) {
    Scope s = Scope::new_root();
    auto var = ops::Variable(s.with_op_name("var"), PartialShape({4, 2}), DataType::kFloat);
    auto slot = ops::Variable(s.with_op_name("slot"), PartialShape({4, 2}), DataType::kFloat);
    auto at = ops::Placeholder(s, DataType::kInt64);
    auto g = ops::Placeholder(s, DataType::kFloat);
    auto update = sparse_apply ? ops::ApplyUpdate(s, "Adagrad", {var, slot, 0.1f, g}, at)
                               : ops::ScatterAdd(s, var, at, g);
    auto init = ops::NoOp(s.with_control_dependencies(
        {ops::Assign(s, var, random_tensor({4, 2}, rng)).op(),
         ops::Assign(s, slot, random_tensor({4, 2}, rng, 0.5f, 1.f)).op()}));
    BOOST_REQUIRE(run_graph(s, {}, {}, {init}, &devices.gpu).ok());
    expect_invalid(
        run_graph(s, {},
                  {{at, Tensor::from_vector<int64_t>({0, -1})}, {g, random_tensor({2, 2}, rng)}},
                  {update.op()}, &devices.gpu),
        sparse_apply ? "SparseApplyAdagrad" : "ScatterAdd", "indices[1] = -1 is not in");
  }
}

// Nothing to gather, scatter or multiply: empty results, and variables left as they were.
BOOST_AUTO_TEST_CASE(empty_indices_and_products_match_the_cpu) {
  std::mt19937 rng(16);
  {
    Scope s = Scope::new_root();
    auto p = ops::Placeholder(s, DataType::kFloat);
    auto i = ops::Placeholder(s, DataType::kInt64);
    compare(s, {ops::GatherV2(s, p, i, int32_t{0})},
            {{p, random_tensor({5, 3}, rng)}, {i, Tensor::from_vector<int64_t>({})}},
            "GatherV2 of no index");
  }
  for (const auto& [x_shape, y_shape] :
       {std::pair{TensorShape{2, 3, 0}, TensorShape{2, 0, 4}},     // k = 0: zeros
        std::pair{TensorShape{0, 3, 5}, TensorShape{0, 5, 4}}}) {  // no matrix at all
    Scope s = Scope::new_root();
    auto x = ops::Placeholder(s, DataType::kFloat);
    auto y = ops::Placeholder(s, DataType::kFloat);
    compare(s, {ops::BatchMatMul(s, x, y)},
            {{x, random_tensor(x_shape, rng)}, {y, random_tensor(y_shape, rng)}},
            "BatchMatMul " + x_shape.to_string() + " x " + y_shape.to_string());
  }
  Devices devices;
  const Tensor initial = random_tensor({4, 2}, rng);
  std::vector<Tensor> results;
  for (Device* device : {&devices.cpu, &devices.gpu}) {
    Scope s = Scope::new_root();
    auto var = ops::Variable(s.with_op_name("var"), PartialShape({4, 2}), DataType::kFloat);
    auto at = ops::Placeholder(s, DataType::kInt64);
    auto u = ops::Placeholder(s, DataType::kFloat);
    auto update = ops::ScatterSub(s, var, at, u);
    BOOST_REQUIRE(run_graph(s, {}, {}, {ops::Assign(s, var, initial).op()}, device).ok());
    auto r = run_graph(
        s, {},
        {{at, Tensor::from_vector<int64_t>({})}, {u, Tensor(DataType::kFloat, TensorShape{0, 2})}},
        {update.op()}, device);
    BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
    auto value = run_graph(s, {ops::Identity(s, var)}, {}, {}, device);
    BOOST_REQUIRE_MESSAGE(value.ok(), value.status().to_string());
    results.push_back(value->at(0));
  }
  check_close(results[0], results[1], "ScatterSub of no index");
  check_close(results[1], initial, "ScatterSub of no index");
}

BOOST_AUTO_TEST_CASE(scatters_and_sparse_updates_match_the_cpu_repeated_rows_included) {
  std::mt19937 rng(14);
  const Tensor initial = random_tensor({10, 3}, rng, 0.5f, 1.5f);  // positive: ScatterDiv
  for (bool repeated : {false, true}) {
    const Tensor indices = repeated ? Tensor::from_vector<int64_t>({7, 2, 7, 0, 2})
                                    : Tensor::from_vector<int64_t>({7, 2, 9, 0, 4});
    const Tensor updates = random_tensor({5, 3}, rng, 0.5f, 1.5f);
    const std::string rows = repeated ? " (repeated rows)" : " (distinct rows)";
    // The Scatter updates, with a row of updates per index and with one scalar for all.
    for (std::string op : {"Update", "Add", "Sub", "Mul", "Div", "Min", "Max"}) {
      for (bool scalar : {false, true}) {
        Devices devices;
        std::vector<Tensor> results;
        for (Device* device : {&devices.cpu, &devices.gpu}) {
          Scope s = Scope::new_root();
          auto var = ops::Variable(s.with_op_name("var"), PartialShape({10, 3}), DataType::kFloat);
          auto at = ops::Placeholder(s, DataType::kInt64);
          auto u = ops::Placeholder(s, DataType::kFloat);
          auto update = ops::Scatter(s, op, var, at, u);
          BOOST_REQUIRE(run_graph(s, {}, {}, {ops::Assign(s, var, initial).op()}, device).ok());
          for (int step = 0; step < 2; ++step) {
            auto r = run_graph(s, {}, {{at, indices}, {u, scalar ? Tensor(1.25f) : updates}},
                               {update.op()}, device);
            BOOST_REQUIRE_MESSAGE(r.ok(), "Scatter" << op << ": " << r.status().to_string());
          }
          auto value = run_graph(s, {ops::Identity(s, var)}, {}, {}, device);
          BOOST_REQUIRE_MESSAGE(value.ok(), value.status().to_string());
          results.push_back(value->at(0));
        }
        check_close(results[0], results[1], "Scatter" + op + (scalar ? " (a scalar)" : "") + rows);
      }
    }
    // The SparseApply updates of the optimizers that have them on the GPU.
    for (std::string kind : {"Momentum", "Adagrad", "Adam"}) {
      Devices devices;
      std::vector<Tensor> results;
      for (Device* device : {&devices.cpu, &devices.gpu}) {
        Scope s = Scope::new_root();
        auto var = ops::Variable(s.with_op_name("var"), PartialShape({10, 3}), DataType::kFloat);
        auto slot1 =
            ops::Variable(s.with_op_name("slot1"), PartialShape({10, 3}), DataType::kFloat);
        auto slot2 =
            ops::Variable(s.with_op_name("slot2"), PartialShape({10, 3}), DataType::kFloat);
        auto g = ops::Placeholder(s, DataType::kFloat);
        auto at = ops::Placeholder(s, DataType::kInt64);
        auto init = ops::NoOp(s.with_control_dependencies(
            {ops::Assign(s, var, initial).op(),
             ops::Assign(s, slot1, ops::Fill(s, Tensor::from_vector<int32_t>({10, 3}), 0.1f)).op(),
             ops::Assign(s, slot2, ops::Fill(s, Tensor::from_vector<int32_t>({10, 3}), 0.2f))
                 .op()}));
        Output update;
        if (kind == "Momentum") {
          update = ops::ApplyUpdate(s, kind, {var, slot1, 0.1f, g, 0.9f}, at, true);
        } else if (kind == "Adagrad") {
          update = ops::ApplyUpdate(s, kind, {var, slot1, 0.1f, g}, at);
        } else {
          update = ops::ApplyUpdate(
              s, kind, {var, slot1, slot2, 0.9f, 0.99f, 0.01f, 0.9f, 0.999f, 1e-8f, g}, at);
        }
        BOOST_REQUIRE(run_graph(s, {}, {}, {init}, device).ok());
        for (int step = 0; step < 3; ++step) {
          auto r = run_graph(s, {}, {{g, updates}, {at, indices}}, {update.op()}, device);
          BOOST_REQUIRE_MESSAGE(r.ok(), "SparseApply" << kind << ": " << r.status().to_string());
        }
        auto values =
            run_graph(s, {ops::Identity(s, var), ops::Identity(s, slot1), ops::Identity(s, slot2)},
                      {}, {}, device);
        BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
        results.insert(results.end(), values->begin(), values->end());
      }
      check_close(results[0], results[3], "SparseApply" + kind + " variable" + rows);
      check_close(results[1], results[4], "SparseApply" + kind + " slot" + rows);
      check_close(results[2], results[5], "SparseApply" + kind + " second slot" + rows);
    }
  }
}

BOOST_AUTO_TEST_CASE(max_pooling_and_its_gradient_match_the_cpu_ties_included) {
  std::mt19937 rng(12);
  struct Case {
    TensorShape input;
    ops::PoolAttrs attrs;
  };
  const std::vector<Case> cases = {
      {{2, 8, 8, 3}, {.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"}},
      {{2, 7, 9, 2}, {.ksize = {1, 3, 3, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"}},
      {{1, 9, 6, 4}, {.ksize = {1, 3, 2, 1}, .strides = {1, 1, 1, 1}, .padding = "VALID"}}};
  for (const Case& c : cases) {
    Scope s = Scope::new_root();
    auto x = ops::Placeholder(s, DataType::kFloat);
    // ReLU's zeros make ties in the windows: the gradient goes to the first maximum on both.
    auto y = ops::MaxPool(s, ops::Relu(s, x), c.attrs);
    auto r = ops::Placeholder(s, DataType::kFloat);
    auto grads = value_or_throw(add_gradients(
        s, {ops::Sum(s, ops::Mul(s, y, r), Tensor::from_vector<int32_t>({0, 1, 2, 3}))}, {x}));
    Tensor input = random_tensor(c.input, rng);
    Tensor out = testing::run_one(s, y, {{x, input}});
    compare(s, {y, grads[0]}, {{x, input}, {r, random_tensor(out.shape(), rng)}},
            "MaxPool " + c.input.to_string() + " " + c.attrs.padding, 0.0);
  }
}

BOOST_AUTO_TEST_CASE(a_cnn_trains_on_the_gpu_as_on_the_cpu) {
  std::mt19937 rng(13);
  Tensor images = random_tensor({16, 28, 28, 1}, rng, 0.f, 1.f);
  Tensor labels(DataType::kInt64, TensorShape{16});
  for (auto& l : labels.flat<int64_t>())
    l = static_cast<int64_t>(rng() % 10);
  Tensor k1 = random_tensor({5, 5, 1, 8}, rng, -0.2f, 0.2f);
  Tensor k2 = random_tensor({5, 5, 8, 16}, rng, -0.05f, 0.05f);
  Tensor dense = random_tensor({7 * 7 * 16, 10}, rng, -0.05f, 0.05f);
  Devices devices;
  std::vector<std::vector<float>> losses(2);
  int d = 0;
  for (Device* device : {&devices.cpu, &devices.gpu}) {
    Scope s = Scope::new_root();
    auto x = ops::Placeholder(s, DataType::kFloat);
    auto y = ops::Placeholder(s, DataType::kInt64);
    auto v1 = make_variable(s, "k1", k1);
    auto v2 = make_variable(s, "k2", k2);
    auto v3 = make_variable(s, "dense", dense);
    const ops::PoolAttrs pool{.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"};
    Output h = ops::MaxPool(s, ops::Relu(s, ops::Conv2D(s, x, v1.ref, {.padding = "SAME"})), pool);
    h = ops::MaxPool(s, ops::Relu(s, ops::Conv2D(s, h, v2.ref, {.padding = "SAME"})), pool);
    h = ops::Reshape(s, h, Tensor::from_vector<int64_t>({-1, 7 * 7 * 16}));
    auto logits = ops::MatMul(s, h, v3.ref);
    auto loss = ops::Mean(s, ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, y).loss,
                          Tensor::from_vector<int32_t>({0}));
    auto train = GradientDescentOptimizer(0.1).minimize(s, loss);
    BOOST_REQUIRE_MESSAGE(train.ok(), train.status().to_string());
    BOOST_REQUIRE(run_graph(s, {}, {}, {global_variables_initializer(s)}, device).ok());
    for (int i = 0; i < 10; ++i) {
      auto r = run_graph(s, {loss}, {{x, images}, {y, labels}}, {*train}, device);
      BOOST_REQUIRE_MESSAGE(r.ok(), device->name() << ": " << r.status().to_string());
      losses[d].push_back(r->at(0).scalar<float>());
    }
    ++d;
  }
  for (int i = 0; i < 10; ++i)
    BOOST_TEST(std::abs(losses[0][i] - losses[1][i]) <= 1e-3 * std::max(1.f, losses[0][i]),
               "step " << i << ": CPU loss " << losses[0][i] << ", GPU " << losses[1][i]);
  BOOST_TEST(losses[1].back() < losses[1].front());
}

BOOST_AUTO_TEST_CASE(the_caching_allocator_reuses_freed_blocks) {
  auto gpu = value_or_throw(open_gpu(0));
  { auto t = value_or_throw(gpu->allocate(DataType::kFloat, {1000, 1000})); }
  const int64_t mallocs = gpu->allocator().stats().cuda_mallocs;
  for (int i = 0; i < 10; ++i) {
    auto t = value_or_throw(gpu->allocate(DataType::kFloat, {1000, 1000}));
  }
  BOOST_TEST(gpu->allocator().stats().cuda_mallocs == mallocs);
  Tensor host = Tensor::from_vector<float>({1, 2, 3});
  Tensor back = value_or_throw(gpu->to_host(value_or_throw(gpu->to_device(host))));
  BOOST_TEST(back.flat<float>()[2] == 3.f);
  Tensor copy = value_or_throw(gpu->to_device(host)).deep_copy();
  BOOST_TEST(!copy.on_host());
  BOOST_TEST(value_or_throw(gpu->to_host(copy)).flat<float>()[1] == 2.f);
}

BOOST_AUTO_TEST_CASE(large_host_tensors_go_to_the_gpu_and_back_unchanged) {
  // Large buffers come from the BufferPool, pinned once a GPU is open: copied without staging,
  // and kept alive until the copy has run even when the caller drops them at once.
  auto gpu = value_or_throw(open_gpu(0));
  std::mt19937 rng(10);
  std::vector<Tensor> sources, copies;
  for (int i = 0; i < 8; ++i) {
    Tensor big = random_tensor({512 + 64 * i, 1024}, rng);
    sources.push_back(big.deep_copy());
    copies.push_back(value_or_throw(gpu->to_device(big)));
  }
  for (int i = 0; i < 8; ++i)
    check_close(sources[i], value_or_throw(gpu->to_host(copies[i])), "copy " + std::to_string(i),
                0.0);
}

#else

BOOST_AUTO_TEST_CASE(needs_a_build_with_cuda) {}  // never runs: the precondition fails

#endif  // TROUPE_HAVE_CUDA

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
