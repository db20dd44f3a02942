// step latency: the smallest remote step — fetch a scalar variable held by ps:0 (another
// process) through a session on worker:0 (this process) — against a raw TCP round trip of
// one byte between two processes, in the same run.
#include "actors/session.hpp"
#include "benchmarks.hpp"
#include "graph/ops/ops.hpp"
#include "node_pair.hpp"
#include "report.hpp"
#include "tcp_baseline.hpp"

namespace troupe::bench {

void latency_bench(const BenchOptions& options) {
  const int steps = options.quick ? 200 : 5000;
  TcpBaseline tcp(options.self);
  NodePair pair;
  Scope root = Scope::new_root();
  Scope ps = root.with_device("/job:ps/task:0");
  Output v = ops::Variable(ps.with_op_name("v"), PartialShape({}), DataType::kFloat);
  Operation init = ops::Assign(ps, v, 1.0f).op();
  Output read = ops::Identity(ps, v);
  Session session(pair.target());
  session.run_targets({init});
  for (int i = 0; i < 100; ++i)
    session.run(read);

  std::vector<double> troupe, raw;
  for (int i = 0; i < 100; ++i)
    tcp.round_trip();
  // Interleaved, so both see the same machine.
  for (int i = 0; i < steps; ++i) {
    troupe.push_back(seconds_of([&] { session.run(read); }) * 1e6);
    raw.push_back(tcp.round_trip() * 1e6);
  }
  report({"latency", "fetch a scalar variable from another process", "troupe", "us", troupe});
  report(
      {"latency", "fetch a scalar variable from another process", "raw TCP round trip", "us", raw});
}

}  // namespace troupe::bench
