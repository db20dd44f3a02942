// kernels: MatMul of two n x n float matrices (n = 256, 1024, 2048) on 1 and 2 threads, in
// GFLOP/s, through Session::run on a local server (the step's fixed cost is included; it is
// microseconds against milliseconds). bench/peers/torch_mm.py measures torch.mm the same way;
// scripts/bench.sh alternates rounds of the two (BenchOptions::rounds).
#include <fmt/core.h>

#include "benchmarks.hpp"
#include "report.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe::bench {

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
}

}  // namespace troupe::bench
