// step latency: the smallest remote step — fetch a scalar variable held by ps:0 (another
// process) through a session on worker:0 (this process) — with TLS (the default), with TLS and
// steps as actor messages instead of channel calls, and with --insecure, against a raw TCP
// round trip of one byte between two processes, in the same run.
#include "benchmarks.hpp"
#include "node_pair.hpp"
#include "report.hpp"
#include "tcp_baseline.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/apps/deploy/throwaway_credentials.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe::bench {

void latency_bench(const BenchOptions& options) {
  const int steps = options.quick ? 200 : 5000;
  auto credentials = value_or_throw(deploy::ThrowawayCredentials::create());
  TcpBaseline tcp(options.self);
  NodePair tls_pair({}, true, credentials->tls()), pair;
  NodePair no_calls_pair({}, true, credentials->tls(), /*calls=*/false);
  Scope root = Scope::new_root();
  Scope ps = root.with_device("/job:ps/task:0");
  Output v = ops::Variable(ps.with_op_name("v"), PartialShape({}), DataType::kFloat);
  Operation init = ops::Assign(ps, v, 1.0f).op();
  Output read = ops::Identity(ps, v);
  Session tls_session =
      value_or_throw(Session::create(tls_pair.target(), std::nullopt, tls_pair.runtime()));
  Session session = value_or_throw(Session::create(pair.target(), std::nullopt, pair.runtime()));
  Session no_calls_session = value_or_throw(
      Session::create(no_calls_pair.target(), std::nullopt, no_calls_pair.runtime()));
  for (Session* s : {&tls_session, &session, &no_calls_session}) {
    throw_if_error(s->run_targets({init}));
    for (int i = 0; i < 100; ++i)
      value_or_throw(s->run(read));
  }

  std::vector<double> with_tls, troupe, no_calls, raw;
  for (int i = 0; i < 100; ++i)
    tcp.round_trip();
  // Interleaved, so all see the same machine.
  for (int i = 0; i < steps; ++i) {
    with_tls.push_back(seconds_of([&] { value_or_throw(tls_session.run(read)); }) * 1e6);
    troupe.push_back(seconds_of([&] { value_or_throw(session.run(read)); }) * 1e6);
    no_calls.push_back(seconds_of([&] { value_or_throw(no_calls_session.run(read)); }) * 1e6);
    raw.push_back(tcp.round_trip() * 1e6);
  }
  const char* kCase = "fetch a scalar variable from another process";
  report({"latency", kCase, "troupe TLS", "us", with_tls});
  report({"latency", kCase, "troupe", "us", troupe});
  report({"latency", kCase, "troupe TLS, steps as actor messages", "us", no_calls});
  report({"latency", kCase, "raw TCP round trip", "us", raw});
}

}  // namespace troupe::bench
