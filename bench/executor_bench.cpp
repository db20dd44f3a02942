// executor overhead: steps of 10,000 scalar ops in one process — a chain (each op waits for
// the one before) and a fan-out/fan-in (10,000 independent ops feeding one AddN) — as time per
// node (the chain also traced: RunOptions::trace_level, each node's statistics recorded and
// sent back); and the fixed cost of Session::run on a local server (fetch a constant).
#include "benchmarks.hpp"
#include "report.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe::bench {
namespace {

constexpr int kOps = 10000;

std::vector<double> per_node_us(Session& session, const Output& fetch, int nodes, int samples,
                                const RunOptions& options = {}) {
  auto run = [&] { value_or_throw(session.run({}, {fetch}, {}, options)); };
  for (int i = 0; i < 2; ++i)
    run();
  std::vector<double> us;
  for (int i = 0; i < samples; ++i) {
    us.push_back(seconds_of(run) * 1e6 / nodes);
  }
  return us;
}

}  // namespace

void executor_bench(const BenchOptions& options) {
  const int samples = options.quick ? 3 : 20;
  auto server = value_or_throw(Server::create_local_server());
  {
    Scope root = Scope::new_root();
    Output one = ops::Const(root, 1.0f);
    Output x = ops::Const(root, 0.0f);
    for (int i = 0; i < kOps; ++i)
      x = ops::Add(root, x, one);
    Session session = value_or_throw(Session::create(server->target()));
    report({"executor", "chain of 10,000 scalar Adds", "troupe, one process", "us per node",
            per_node_us(session, x, kOps + 2, samples)});
    report({"executor", "chain of 10,000 scalar Adds, traced", "troupe, one process", "us per node",
            per_node_us(session, x, kOps + 2, samples, {.trace_level = TraceLevel::kFullTrace})});
  }
  {
    Scope root = Scope::new_root();
    Output one = ops::Const(root, 1.0f);
    Output source = ops::Const(root, 0.0f);
    std::vector<Input> outputs;
    for (int i = 0; i < kOps; ++i)
      outputs.push_back(ops::Add(root, source, one));
    Output sum = ops::AddN(root, outputs);
    Session session = value_or_throw(Session::create(server->target()));
    report({"executor", "fan-out/fan-in of 10,000 scalar Adds", "troupe, one process",
            "us per node", per_node_us(session, sum, kOps + 3, samples)});
  }
  {
    Scope root = Scope::new_root();
    Output c = ops::Const(root, 1.0f);
    Session session = value_or_throw(Session::create(server->target()));
    for (int i = 0; i < 1000; ++i)
      value_or_throw(session.run(c));
    std::vector<double> us;
    for (int i = 0; i < (options.quick ? 1000 : 20000); ++i) {
      us.push_back(seconds_of([&] { value_or_throw(session.run(c)); }) * 1e6);
    }
    report({"executor", "Session::run fixed cost (fetch a constant)", "troupe, local server", "us",
            us});
  }
}

}  // namespace troupe::bench
