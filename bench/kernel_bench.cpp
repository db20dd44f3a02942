// kernels: MatMul of two n x n float matrices (n = 256, 1024, 2048) on 1 and 2 threads, in
// GFLOP/s, through Session::run on a local server (the step's fixed cost is included; it is
// microseconds against milliseconds). bench/peers/torch_mm.py measures torch.mm the same way;
// scripts/bench.sh alternates rounds of the two (BenchOptions::rounds).
// Then Conv2D and its two backprops for the second convolution of the CNN (a batch of 128
// [14, 14, 32] images, a [5, 5, 32, 64] filter, SAME), against the one matrix product of the
// same size (the im2col GEMM [128 * 196, 800] x [800, 64]) in the same run: how much im2col and
// col2im cost over the product itself.
// Then the update of an embedding table of 1,000,000 x 16 floats with Adagrad from one step of
// the wide-and-deep model (512 examples x 26 ids, Zipf-distributed, so with duplicates): the
// sparse update (duplicates summed with Unique, then SparseApplyAdagrad on the rows) against the
// dense ApplyAdagrad of the whole table that a dense gradient needs, in updates per second.
#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "benchmarks.hpp"
#include "report.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/indexed_slices.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe::bench {

namespace {

void conv_bench(const BenchOptions& options) {
  constexpr int64_t kBatch = 128, kSide = 14, kIn = 32, kOut = 64, kWindow = 5;
  const double flops = 2.0 * kBatch * kSide * kSide * kWindow * kWindow * kIn * kOut;
  for (int threads : {1, 2}) {
    SessionConfig config;
    config.intra_op_threads = threads;
    auto server = value_or_throw(Server::create_local_server(config));
    Scope root = Scope::new_root();
    auto filled = [&](const std::string& name, std::vector<int64_t> dims) {
      Output v = ops::Variable(root.with_op_name(name), PartialShape(dims), DataType::kFloat);
      auto init = ops::Assign(root, v, ops::Fill(root, Tensor::from_vector<int64_t>(dims), 0.5f));
      return std::make_pair(v, init.op());
    };
    auto [images, init_images] = filled("images", {kBatch, kSide, kSide, kIn});
    auto [filter, init_filter] = filled("filter", {kWindow, kWindow, kIn, kOut});
    auto [dy, init_dy] = filled("dy", {kBatch, kSide, kSide, kOut});
    auto [patches, init_patches] =
        filled("patches", {kBatch * kSide * kSide, kWindow * kWindow * kIn});
    auto [matrix, init_matrix] = filled("matrix", {kWindow * kWindow * kIn, kOut});
    const ops::ConvAttrs same{.padding = "SAME"};
    const std::vector<std::pair<std::string, Output>> cases = {
        {"Conv2D", ops::Conv2D(root, images, filter, same)},
        {"Conv2DBackpropInput",
         ops::Conv2DBackpropInput(root, ops::Shape(root, images), filter, dy, same)},
        {"Conv2DBackpropFilter",
         ops::Conv2DBackpropFilter(root, images, ops::Shape(root, filter), dy, same)},
        {"MatMul of the im2col size", ops::MatMul(root, patches, matrix)}};
    Session session = value_or_throw(Session::create(server->target()));
    throw_if_error(
        session.run_targets({init_images, init_filter, init_dy, init_patches, init_matrix}));
    const int total = options.quick ? 3 : 20;
    const int samples = (total + options.rounds - 1) / options.rounds;
    for (const auto& [name, output] : cases) {
      // Fetch a small reduction of it (under a millisecond), so that the output is not copied
      // back to the client: the kernel is what is timed.
      Output probe = ops::Sum(root, output, {0, 1});
      for (int i = 0; i < 2; ++i)
        value_or_throw(session.run(probe));
      std::vector<double> gflops;
      for (int i = 0; i < samples; ++i) {
        double s = seconds_of([&] { value_or_throw(session.run(probe)); });
        gflops.push_back(flops / s / 1e9);
      }
      report({"kernels",
              fmt::format("{} 128x14x14x32 * 5x5x32x64, {} thread{}", name, threads,
                          threads == 1 ? "" : "s"),
              "troupe", "GFLOP/s", gflops});
    }
  }
}

void sparse_update_bench(const BenchOptions& options) {
  constexpr int64_t kRows = 1000000, kDim = 16, kIds = 512 * 26;
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto filled = [&](const std::string& name, float value) {
    Output v =
        ops::Variable(root.with_op_name(name), PartialShape({kRows, kDim}), DataType::kFloat);
    return std::make_pair(
        v, ops::Assign(root, v, ops::Fill(root, Tensor::from_vector<int64_t>({kRows, kDim}), value))
               .op());
  };
  auto [table, init_table] = filled("table", 0.01f);
  auto [accum, init_accum] = filled("accum", 0.1f);
  // Zipf(1.2)-like ids: rank r drawn with probability ~ 1 / r^1.2, by inverting the CDF.
  std::vector<int64_t> ids(kIds);
  uint64_t state = 12345;
  for (int64_t& id : ids) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(state >> 11) / 9007199254740992.0;
    id = std::min<int64_t>(kRows - 1, static_cast<int64_t>(std::pow(1.0 - u, -1.0 / 0.2)) - 1);
  }
  Tensor values(DataType::kFloat, TensorShape{kIds, kDim});
  for (int64_t i = 0; i < values.num_elements(); ++i)
    values.data<float>()[i] = 0.001f * static_cast<float>(i % 97);
  const IndexedSlices slices{ops::Const(root, values), ops::Const(root, Tensor::from_vector(ids)),
                             ops::Const(root, Tensor::from_vector<int64_t>({kRows, kDim}))};
  const IndexedSlices distinct = deduplicate(root, slices);
  Output sparse =
      ops::ApplyUpdate(root, "Adagrad", {table, accum, 0.1f, distinct.values}, distinct.indices);
  auto [dense_grad, init_grad] = filled("dense_grad", 0.0f);
  Operation densify = ops::Assign(root, dense_grad, to_dense(root, slices)).op();
  Output dense = ops::ApplyAdagrad(root, table, accum, 0.1f, dense_grad);
  Session session = value_or_throw(Session::create(server->target()));
  throw_if_error(session.run_targets({init_table, init_accum, init_grad}));
  throw_if_error(session.run_targets({densify}));
  const int samples = options.quick ? 3 : std::max(5, 30 / options.rounds);
  for (const auto& [name, update] : std::vector<std::pair<std::string, Operation>>{
           {"sparse", sparse.op()}, {"dense", dense.op()}}) {
    throw_if_error(session.run_targets({update}));
    std::vector<double> per_second;
    for (int i = 0; i < samples; ++i) {
      per_second.push_back(1.0 /
                           seconds_of([&] { throw_if_error(session.run_targets({update})); }));
    }
    report({"kernels",
            fmt::format("Adagrad update of a 1,000,000 x 16 table from 512 x 26 ids, {}", name),
            "troupe", "updates/s", per_second});
  }
}

}  // namespace

void kernel_bench(const BenchOptions& options) {
  for (int threads : {1, 2}) {
    SessionConfig config;
    config.intra_op_threads = threads;
    auto server = value_or_throw(Server::create_local_server(config));
    for (int64_t n : {256, 1024, 2048}) {
      Scope root = Scope::new_root();
      auto matrix = [&](const std::string& name, float value) {
        Output v = ops::Variable(root.with_op_name(name), PartialShape({n, n}), DataType::kFloat);
        return std::make_pair(
            v, ops::Assign(root, v, ops::Fill(root, Tensor::from_vector<int64_t>({n, n}), value))
                   .op());
      };
      auto [a, init_a] = matrix(fmt::format("a{}", n), 0.5f);
      auto [b, init_b] = matrix(fmt::format("b{}", n), 0.25f);
      Output product = ops::MatMul(root, a, b);
      Session session = value_or_throw(Session::create(server->target()));
      throw_if_error(session.run_targets({init_a, init_b}));
      int total = options.quick ? 3 : (n <= 256 ? 200 : n <= 1024 ? 20 : 7);
      int samples = (total + options.rounds - 1) / options.rounds;
      for (int i = 0; i < 3; ++i)
        value_or_throw(session.run(product));
      std::vector<double> gflops;
      for (int i = 0; i < samples; ++i) {
        double s = seconds_of([&] { value_or_throw(session.run(product)); });
        gflops.push_back(2.0 * static_cast<double>(n * n * n) / s / 1e9);
      }
      report({"kernels",
              fmt::format("MatMul {0}x{0}, {1} thread{2}", n, threads, threads == 1 ? "" : "s"),
              "troupe", "GFLOP/s", gflops});
    }
  }
  conv_bench(options);
  sparse_update_bench(options);
}

}  // namespace troupe::bench
