// transfer: tensors from a device of one task to a device of another — the real _Send/_Recv
// path — between two processes and inside one, against raw TCP between two processes.
// memory: how much a node's peak memory grows when it receives a 120 MB tensor.
//
// A step moves `count` float tensors of `bytes` each from variables on ps:0 to worker:0, where
// Size consumes them (it reads no element, so the step is the move and nothing else). Small
// tensors move 64 to a step: they are measured as a stream, as the TCP baseline is.
#include <fmt/core.h>

#include "benchmarks.hpp"
#include "node_pair.hpp"
#include "report.hpp"
#include "tcp_baseline.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/apps/deploy/throwaway_credentials.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe::bench {
namespace {

struct Case {
  std::string name;
  int64_t bytes;
  int count;    // tensors per step
  int samples;  // steps measured
};

std::vector<Case> cases(bool quick) {
  constexpr int64_t KiB = 1024, MiB = 1024 * KiB;
  if (quick) return {{"64 KiB", 64 * KiB, 64, 3}, {"16 MiB", 16 * MiB, 1, 3}};
  return {{"4 KiB", 4 * KiB, 64, 30},  {"64 KiB", 64 * KiB, 64, 30}, {"1 MiB", 1 * MiB, 1, 30},
          {"16 MiB", 16 * MiB, 1, 15}, {"64 MiB", 64 * MiB, 1, 9},   {"256 MiB", 256 * MiB, 1, 5}};
}

// Variables on `from` holding `count` tensors of `bytes`, and their sizes computed on `to`.
struct TransferGraph {
  std::vector<Operation> init;
  std::vector<Output> sizes;
};

TransferGraph build(const Scope& root, const Case& c, const std::string& from,
                    const std::string& to) {
  TransferGraph g;
  Scope src = root.with_device(from), dst = root.with_device(to);
  int64_t elements = c.bytes / 4;
  for (int i = 0; i < c.count; ++i) {
    std::string name = fmt::format("v{}_{}", c.bytes, i);
    Output v = ops::Variable(src.with_op_name(name), PartialShape({elements}), DataType::kFloat);
    Output fill = ops::Fill(src, Tensor::from_vector<int64_t>({elements}), 1.0f);
    g.init.push_back(ops::Assign(src, v, fill).op());
    g.sizes.push_back(ops::Size(dst, v));
  }
  return g;
}

// Where a session runs the step: a server's target, and the runtime to reach it with.
struct Target {
  std::string target;
  std::shared_ptr<Runtime> runtime;
};

Target target_of(const NodePair& pair) {
  return {pair.target(), pair.runtime()};
}

// Runs the case's step on each of `targets` in turn, `c.samples` times (after two unmeasured
// rounds): GB/s of each step, by target. Each of `baselines` moves the same bytes after each
// round, so all see the same moments of a noisy machine; their GB/s go to `raw` (one series
// each).
std::vector<std::vector<double>> measure(const std::vector<Target>& targets, const Case& c,
                                         const std::vector<TcpBaseline*>& baselines = {},
                                         std::vector<std::vector<double>>* raw = nullptr) {
  Scope root = Scope::new_root();
  TransferGraph g = build(root, c, "/job:ps/task:0", "/job:worker/task:0");
  std::vector<std::unique_ptr<Session>> sessions;
  for (const Target& target : targets) {
    sessions.push_back(std::make_unique<Session>(
        value_or_throw(Session::create(target.target, std::nullopt, target.runtime))));
    throw_if_error(sessions.back()->run_targets(g.init));
  }
  auto bytes = static_cast<double>(c.bytes) * c.count;
  std::vector<std::vector<double>> rates(targets.size());
  if (raw != nullptr) raw->assign(baselines.size(), {});
  for (int i = -2; i < c.samples; ++i) {
    for (size_t t = 0; t < sessions.size(); ++t) {
      double s = seconds_of([&] { value_or_throw(sessions[t]->run(g.sizes)); });
      if (i >= 0) rates[t].push_back(bytes / s / 1e9);
    }
    for (size_t b = 0; b < baselines.size(); ++b) {
      double s = baselines[b]->transfer(static_cast<size_t>(c.bytes), c.count);
      if (i >= 0) (*raw)[b].push_back(bytes / s / 1e9);
    }
  }
  return rates;
}

}  // namespace

void transfer_bench(const BenchOptions& options) {
  // TLS, the default, and --insecure; each on the same host, as the benchmark runs (large
  // tensors through shared memory), and on the channel's socket (the path between hosts).
  auto credentials = value_or_throw(deploy::ThrowawayCredentials::create());
  TlsOptions tls = credentials->tls();
  TcpBaseline tcp(options.self), tls_stream(options.self, tls);
  NodePair tls_same_host({}, true, tls), tls_socket({}, false, tls);
  NodePair same_host, socket({}, /*shared_memory=*/false);
  auto local = value_or_throw(LocalCluster::start(1, 1));
  for (const Case& c : cases(options.quick)) {
    std::vector<std::vector<double>> raw;
    auto rates = measure(
        {target_of(tls_socket), target_of(tls_same_host), target_of(socket), target_of(same_host)},
        c, {&tcp, &tls_stream}, &raw);
    report({"transfer", c.name, "troupe TLS, two processes, channel socket", "GB/s", rates[0]});
    report({"transfer", c.name, "troupe TLS, two processes, same host (shared memory)", "GB/s",
            rates[1]});
    report({"transfer", c.name, "raw TLS stream, two processes (OpenSSL, AES-256-GCM)", "GB/s",
            raw[1]});
    report({"transfer", c.name, "troupe, two processes, TCP channel", "GB/s", rates[2]});
    report(
        {"transfer", c.name, "troupe, two processes, same host (shared memory)", "GB/s", rates[3]});
    report({"transfer", c.name, "raw TCP, two processes", "GB/s", raw[0]});
    // In one process the figure of interest is time, which should not grow with the size.
    std::vector<double> in_process;
    auto in_process_rates = measure({{value_or_throw(local->target("worker", 0)), nullptr}}, c);
    for (double rate : in_process_rates[0]) {
      in_process.push_back(static_cast<double>(c.bytes) * c.count / rate / 1e3);  // us
    }
    report({"transfer", c.name, "troupe, one process (step time)", "us", in_process});
  }
}

namespace {

// The growth of the node's peak memory (VmHWM) when worker:0 (here) sends it a 120 MB tensor
// to sum, as a multiple of the tensor's size; a fresh node each time.
double memory_growth() {
  constexpr int64_t kBytes = 120'000'000;
  NodePair pair;
  Scope root = Scope::new_root();
  Scope src = root.with_device("/job:worker/task:0"), dst = root.with_device("/job:ps/task:0");
  auto make = [&](const std::string& name, int64_t elements) {
    Output v = ops::Variable(src.with_op_name(name), PartialShape({elements}), DataType::kFloat);
    Operation init =
        ops::Assign(src, v, ops::Fill(src, Tensor::from_vector<int64_t>({elements}), 1.0f)).op();
    return std::make_pair(init, ops::Sum(dst, v, Tensor::from_vector<int32_t>({0})));
  };
  auto [small_init, small_sum] = make("small", 1024);
  auto [big_init, big_sum] = make("big", kBytes / 4);
  Session session = value_or_throw(Session::create(pair.target()));
  throw_if_error(session.run_targets({small_init, big_init}));
  value_or_throw(
      session.run(small_sum));  // the node has run a step: what follows is the tensor's cost
  int64_t before = peak_resident_bytes(pair.node_pid());
  value_or_throw(session.run(big_sum));
  int64_t after = peak_resident_bytes(pair.node_pid());
  return static_cast<double>(after - before) / kBytes;
}

}  // namespace

void memory_bench(const BenchOptions& options) {
  std::vector<double> growth;
  for (int i = 0; i < (options.quick ? 1 : 3); ++i)
    growth.push_back(memory_growth());
  report(
      {"memory", "120 MB tensor received", "troupe node, peak memory growth", "x tensor", growth});
}

}  // namespace troupe::bench
