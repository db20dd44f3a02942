// Training on the runtime: checkpoints (Saver), MonitoredTrainingSession start-up, hooks, and
// synchronous replicas on an in-process cluster.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <stop_token>
#include <thread>

#include <boost/test/unit_test.hpp>

#include "apps/training/event_scalars.hpp"
#include "status_checks.hpp"
#include "temp_files.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/apps/training/monitored_session.hpp"
#include "troupe/apps/training/sync_replicas_hook.hpp"
#include "troupe/graph/device_setter.hpp"
#include "troupe/graph/formats/checkpoint_files.hpp"
#include "troupe/graph/formats/npz.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/partitioned_variables.hpp"
#include "troupe/graph/sync_replicas_optimizer.hpp"

namespace troupe {
using testing::TempDir;
namespace fs = std::filesystem;
using testing::check_error;
using testing::scalars_in;
using testing::steps_of;

namespace {

// Linear regression y = x w with w = [1, -2, 3]: the model, a fixed data set, its loss.
struct Regression {
  Scope root = Scope::new_root();
  Output x, y, loss;
  ModelVariable w, step;

  // `step_dtype`: the global step's, int64 (get_or_create_global_step) or int32 (TensorFlow 1.x
  // programs' usual tf.Variable(0, trainable=False, name='global_step')).
  explicit Regression(const Scope& placed_root, const Scope& placed,
                      DataType step_dtype = DataType::kInt64)
      : root(placed_root) {
    x = ops::Placeholder(placed.with_op_name("x"), DataType::kDouble, PartialShape({-1, 3}));
    y = ops::Placeholder(placed.with_op_name("y"), DataType::kDouble, PartialShape({-1, 1}));
    w = make_variable(placed, "w",
                      value_or_throw(Tensor::from_vector<double>({0.5, 0.5, 0.5}, {3, 1})));
    step = step_dtype == DataType::kInt64
               ? get_or_create_global_step(placed)
               : make_variable(placed, "global_step", Tensor(int32_t{0}), /*trainable=*/false);
    loss = ops::Mean(
        placed, ops::Square(placed, ops::Sub(placed, ops::MatMul(placed, x, w.ref), y)), {0, 1});
  }
  Regression() : Regression(Scope::new_root()) {}
  explicit Regression(const Scope& r) : Regression(r, r) {}

  // Examples [begin, begin + n) of a fixed data set.
  static FeedDict batch(const Regression& m, int begin, int n) {
    Tensor xs(DataType::kDouble, TensorShape{n, 3});
    Tensor ys(DataType::kDouble, TensorShape{n, 1});
    for (int i = 0; i < n; ++i) {
      double a = std::sin(begin + i), b = std::cos(2.0 * (begin + i)), c = 0.1 * ((begin + i) % 7);
      xs.data<double>()[3 * i] = a;
      xs.data<double>()[3 * i + 1] = b;
      xs.data<double>()[3 * i + 2] = c;
      ys.data<double>()[i] = a - 2 * b + 3 * c;
    }
    return {{m.x, xs}, {m.y, ys}};
  }
};

std::vector<double> values_of(Session& session, const Output& out) {
  return value_or_throw(session.run(out)).to_vector<double>();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(saver)

BOOST_AUTO_TEST_CASE(checkpoints_round_trip_and_rotate) {
  TempDir dir;
  auto server = value_or_throw(Server::create_local_server());
  Regression m;
  auto saver = Saver::create(m.root, {.max_to_keep = 2});
  BOOST_REQUIRE_MESSAGE(saver.ok(), saver.status().to_string());
  Session session = value_or_throw(Session::create(server->target()));
  throw_if_error(session.run_targets({global_variables_initializer(m.root)}));
  auto first = saver->save(session, default_checkpoint_prefix(dir.path().string()), 10);
  BOOST_REQUIRE_MESSAGE(first.ok(), first.status().to_string());
  BOOST_TEST(fs::path(*first).filename() == "model.ckpt-10.npz");

  // The file is a plain .npz with one array per variable.
  auto arrays = value_or_throw(read_npz(*first));
  BOOST_REQUIRE(arrays.size() == 2u);
  BOOST_TEST(arrays[0].first == "w");
  BOOST_TEST(arrays[0].second.to_vector<double>() == (std::vector<double>{0.5, 0.5, 0.5}));
  BOOST_TEST(arrays[1].first == "global_step");

  throw_if_error(session.run_targets(
      {ops::Assign(m.root, m.w.ref, value_or_throw(Tensor::from_vector<double>({9, 9, 9}, {3, 1})))
           .op()}));
  BOOST_REQUIRE(saver->restore(session, *first).ok());
  BOOST_TEST(values_of(session, m.w.ref) == (std::vector<double>{0.5, 0.5, 0.5}));

  BOOST_REQUIRE(saver->save(session, default_checkpoint_prefix(dir.path().string()), 20).ok());
  BOOST_REQUIRE(saver->save(session, default_checkpoint_prefix(dir.path().string()), 30).ok());
  BOOST_TEST(!fs::exists(*first));  // only the newest two are kept
  auto latest = value_or_throw(latest_checkpoint(dir.path().string()));
  BOOST_REQUIRE(latest.has_value());
  BOOST_TEST(fs::path(*latest).filename() == "model.ckpt-30.npz");
}

BOOST_AUTO_TEST_CASE(restoring_a_checkpoint_that_does_not_fit) {
  TempDir dir;
  fs::create_directories(dir.path());
  auto server = value_or_throw(Server::create_local_server());
  Regression m;
  auto saver = value_or_throw(Saver::create(m.root));
  Session session = value_or_throw(Session::create(server->target()));
  std::string missing = (dir.path() / "missing.npz").string();
  BOOST_REQUIRE(write_npz(missing, {{"global_step", Tensor(int64_t{3})}}).ok());
  check_error(saver.restore(session, missing), Code::kNotFound,
              "Key w not found in checkpoint '" + missing + "'");
  std::string wrong = (dir.path() / "wrong.npz").string();
  BOOST_REQUIRE(write_npz(wrong, {{"w", Tensor::from_vector<double>({1, 2})},
                                  {"global_step", Tensor(int64_t{3})}})
                    .ok());
  check_error(saver.restore(session, wrong), Code::kInvalidArgument, "variable 'w'");
  BOOST_TEST(!value_or_throw(latest_checkpoint(dir.path().string())).has_value());
}

namespace {

// A [rows, 2] table split into shards of `sizes` rows along axis 0 (a partitioned variable:
// each shard records its slice of "table"), holding 0, 1, 2, ... in row-major order.
struct ShardedTable {
  Scope root = Scope::new_root();
  std::vector<Output> shards;
  Operation fill;

  explicit ShardedTable(const std::vector<int64_t>& sizes) {
    int64_t rows = 0;
    for (int64_t n : sizes)
      rows += n;
    int64_t offset = 0;
    std::vector<Operation> fills;
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<double> values;
      for (int64_t k = offset * 2; k < (offset + sizes[i]) * 2; ++k)
        values.push_back(static_cast<double>(k));
      ModelVariable part =
          make_variable(root, "table/part_" + std::to_string(i),
                        value_or_throw(Tensor::from_vector(values, {sizes[i], 2})));
      throw_if_error(root.graph().set_variable_slice(part.ref.node()->name(),
                                                     {"table", {rows, 2}, {offset, 0}}));
      shards.push_back(part.ref);
      fills.push_back(part.initializer);
      offset += sizes[i];
    }
    fill = ops::NoOp(root.with_control_dependencies(fills));
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_partitioned_variable_is_saved_whole_and_restores_into_other_shards) {
  TempDir dir;
  auto server = value_or_throw(Server::create_local_server());
  std::string path;
  {
    ShardedTable two({3, 2});
    auto saver = value_or_throw(Saver::create(two.root));
    BOOST_TEST(saver.variable_names() == std::vector<std::string>{"table"});
    Session session = value_or_throw(Session::create(server->target()));
    throw_if_error(session.run_targets({two.fill}));
    path = value_or_throw(saver.save(session, (dir.path() / "model").string(), 1));
    auto arrays = value_or_throw(read_npz(path));
    BOOST_REQUIRE(arrays.size() == 1u);
    BOOST_TEST(arrays[0].first == "table");
    BOOST_TEST(arrays[0].second.shape().to_string() == "[5,2]");
    BOOST_TEST(arrays[0].second.to_vector<double>() ==
               (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  }
  auto server3 = value_or_throw(Server::create_local_server());
  ShardedTable three({1, 1, 3});
  auto saver = value_or_throw(Saver::create(three.root));
  Session session = value_or_throw(Session::create(server3->target()));
  throw_if_error(session.run_targets(
      {ops::Assign(three.root, three.shards[2], Tensor(DataType::kDouble, TensorShape{3, 2}))
           .op()}));
  BOOST_REQUIRE(saver.restore(session, path).ok());
  BOOST_TEST(values_of(session, three.shards[0]) == (std::vector<double>{0, 1}));
  BOOST_TEST(values_of(session, three.shards[1]) == (std::vector<double>{2, 3}));
  BOOST_TEST(values_of(session, three.shards[2]) == (std::vector<double>{4, 5, 6, 7, 8, 9}));
}

// make_partitioned_variable's shards and their Adagrad slots are saved whole; a model with
// its table in 2 shards restores into 3, and its lookups are the same.
BOOST_AUTO_TEST_CASE(an_embedding_table_in_two_shards_restores_into_three_with_the_same_lookups) {
  TempDir dir;
  auto build = [](const Scope& root, int shards) {
    auto table = value_or_throw(make_partitioned_variable(
        root, "emb", {10, 3}, shards, [](const Scope& s, const TensorShape& shape, int index) {
          return ops::Mul(s,
                          ops::RandomUniform(s, Tensor::from_vector(shape.dims()), DataType::kFloat,
                                             {.seed = 7, .seed2 = index}),
                          10.0f);
        }));
    Output ids = ops::Const(root, Tensor::from_vector<int64_t>({9, 0, 4, 5, 4}));
    Output rows = embedding_lookup(root, table, ids);
    BOOST_REQUIRE(AdagradOptimizer(0.5).minimize(root, ops::Sum(root, rows, {0, 1})).ok());
    return rows;
  };
  auto server = value_or_throw(Server::create_local_server());
  Scope two = Scope::new_root();
  Output two_rows = build(two, 2);
  auto saver = value_or_throw(Saver::create(two));
  BOOST_TEST(saver.variable_names() == (std::vector<std::string>{"emb", "emb/Adagrad"}),
             boost::test_tools::per_element());
  Session session = value_or_throw(Session::create(server->target()));
  throw_if_error(session.run_targets({global_variables_initializer(two)}));
  std::vector<float> looked_up = value_or_throw(session.run(two_rows)).to_vector<float>();
  std::string path = value_or_throw(saver.save(session, (dir.path() / "model").string(), 1));

  auto other = value_or_throw(Server::create_local_server());
  Scope three = Scope::new_root();
  Output three_rows = build(three, 3);
  auto restorer = value_or_throw(Saver::create(three));
  Session restored = value_or_throw(Session::create(other->target()));
  BOOST_REQUIRE(restorer.restore(restored, path).ok());
  BOOST_TEST(value_or_throw(restored.run(three_rows)).to_vector<float>() == looked_up,
             boost::test_tools::per_element());
}

// A [5, 2] table 0..9 in shards of 3 and 2 rows on ps 0 and 1, and a bias on the worker.
struct TableOnTwoPs {
  Scope root = Scope::new_root();
  std::vector<Output> shards;
  Output bias;
  Operation fill;

  explicit TableOnTwoPs(const std::vector<int64_t>& sizes) {
    int64_t offset = 0;
    std::vector<Operation> fills;
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<float> values;
      for (int64_t k = offset * 2; k < (offset + sizes[i]) * 2; ++k)
        values.push_back(static_cast<float>(k));
      Scope on_ps = root.with_device(fmt::format("/job:ps/replica:0/task:{}", i % 2));
      ModelVariable part =
          make_variable(on_ps, "table/part_" + std::to_string(i),
                        value_or_throw(Tensor::from_vector(values, {sizes[i], 2})));
      throw_if_error(
          root.graph().set_variable_slice(part.ref.node()->name(), {"table", {5, 2}, {offset, 0}}));
      shards.push_back(part.ref);
      fills.push_back(part.initializer);
      offset += sizes[i];
    }
    ModelVariable b = make_variable(root.with_device("/job:worker/replica:0/task:0"), "bias",
                                    Tensor::from_vector<float>({7}));
    bias = b.ref;
    fills.push_back(b.initializer);
    fill = ops::NoOp(root.with_control_dependencies(fills));
  }

  std::vector<float> table(Session& session) const {
    std::vector<float> all;
    for (const Output& shard : shards) {
      auto part = value_or_throw(session.run(shard)).to_vector<float>();
      all.insert(all.end(), part.begin(), part.end());
    }
    return all;
  }
};

// A sharded saver writes one file per device holding variables (on that device's task: here
// every task sees the same directory), each shard of a partitioned variable as its slice;
// either saver restores the checkpoint, into any partitioning; the index lists the prefix and
// a lost index is rebuilt from complete sets of shards only.
BOOST_AUTO_TEST_CASE(a_sharded_saver_writes_a_file_per_device_and_restores_there) {
  TempDir dir;
  auto cluster = value_or_throw(LocalCluster::start(2, 1));
  const std::string target = value_or_throw(cluster->target("worker", 0));
  TableOnTwoPs two({3, 2});
  auto saver = value_or_throw(Saver::create(two.root, {.max_to_keep = 1, .sharded = true}));
  Session session = value_or_throw(Session::create(target));
  throw_if_error(session.run_targets({two.fill}));
  const std::string prefix = value_or_throw(saver.save(session, dir.file("model"), 5));
  BOOST_TEST(prefix == dir.file("model-5"));
  BOOST_TEST(!fs::exists(prefix + ".npz"));
  auto shard0 = value_or_throw(read_npz(checkpoint_shard_file(prefix, 0, 3)));
  BOOST_REQUIRE(shard0.size() == 1u);
  BOOST_TEST(shard0[0].first == "table@5 2 0,3:-");
  auto shard2 = value_or_throw(read_npz(checkpoint_shard_file(prefix, 2, 3)));
  BOOST_REQUIRE(shard2.size() == 1u);
  BOOST_TEST(shard2[0].first == "bias");
  auto whole = value_or_throw(read_checkpoint(prefix));
  BOOST_REQUIRE(whole.size() == 2u);
  BOOST_TEST(
      whole[1].second.to_vector<float>() == (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
      boost::test_tools::per_element());
  BOOST_TEST(value_or_throw(latest_checkpoint(dir.path().string())).value() == prefix);

  // Restored where the variables are.
  throw_if_error(session.run_targets(
      {ops::Assign(two.root, two.shards[0], Tensor(DataType::kFloat, TensorShape{3, 2})).op(),
       ops::Assign(two.root, two.bias, Tensor::from_vector<float>({0})).op()}));
  throw_if_error(saver.restore(session, prefix));
  BOOST_TEST(two.table(session) == (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
             boost::test_tools::per_element());
  BOOST_TEST(value_or_throw(session.run(two.bias)).to_vector<float>() == std::vector<float>{7});

  // Into three shards, by a sharded saver and by a plain one.
  for (bool sharded : {true, false}) {
    auto other = value_or_throw(LocalCluster::start(2, 1));
    TableOnTwoPs three({1, 1, 3});
    auto restorer = value_or_throw(Saver::create(three.root, {.sharded = sharded}));
    Session restored = value_or_throw(Session::create(value_or_throw(other->target("worker", 0))));
    throw_if_error(restorer.restore(restored, prefix + ".shard-00001-of-00003.npz"));
    BOOST_TEST(three.table(restored) == (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
               boost::test_tools::per_element());
  }

  // max_to_keep = 1: the older set goes once the newer one is indexed.
  const std::string newer = value_or_throw(saver.save(session, dir.file("model"), 6));
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST(!fs::exists(checkpoint_shard_file(prefix, i, 3)));
    BOOST_TEST(fs::exists(checkpoint_shard_file(newer, i, 3)));
  }
  // A plain save under the same name replaces the set.
  auto plain = value_or_throw(Saver::create(two.root, {.max_to_keep = 1}));
  BOOST_TEST(value_or_throw(plain.save(session, dir.file("model"), 6)) == newer + ".npz");
  BOOST_TEST(checkpoint_files_present(newer) == std::vector<std::string>{newer + ".npz"});
  BOOST_TEST(value_or_throw(saver.save(session, dir.file("model"), 6)) == newer);
  BOOST_TEST(checkpoint_files_present(newer).size() == 3u);

  // A lost index is rebuilt from the complete set; an incomplete one does not count.
  fs::remove(dir.path() / "checkpoint");
  auto state = value_or_throw(recover_checkpoint_state(dir.path().string()));
  BOOST_REQUIRE(state.has_value());
  BOOST_TEST(state->model_checkpoint_path == "model-6");
  fs::remove(checkpoint_shard_file(newer, 1, 3));
  fs::remove(dir.path() / "checkpoint");
  BOOST_TEST(!value_or_throw(recover_checkpoint_state(dir.path().string())).has_value());
  check_error(saver.restore(session, newer), Code::kDataLoss, "shard 1 of 3");
}

BOOST_AUTO_TEST_CASE(shards_that_do_not_tile_their_variable_are_refused) {
  ShardedTable gap({2, 2});
  throw_if_error(
      gap.root.graph().set_variable_slice(gap.shards[1].node()->name(), {"table", {5, 2}, {3, 0}}));
  throw_if_error(
      gap.root.graph().set_variable_slice(gap.shards[0].node()->name(), {"table", {5, 2}, {0, 0}}));
  check_error(Saver::create(gap.root).status(), Code::kInvalidArgument,
              "hold 8 of its 10 elements");
  ShardedTable overlap({2, 2});
  throw_if_error(overlap.root.graph().set_variable_slice(overlap.shards[1].node()->name(),
                                                         {"table", {4, 2}, {1, 0}}));
  check_error(Saver::create(overlap.root).status(), Code::kInvalidArgument, "overlap");
  ShardedTable outside({2, 2});
  throw_if_error(outside.root.graph().set_variable_slice(outside.shards[1].node()->name(),
                                                         {"table", {4, 2}, {3, 0}}));
  check_error(Saver::create(outside.root).status(), Code::kInvalidArgument,
              "is not inside the whole shape [4,2]");
  check_error(outside.root.graph().set_variable_slice("nope", {"table", {4, 2}, {0, 0}}),
              Code::kNotFound, "'nope' is not a variable");
  check_error(outside.root.graph().set_variable_slice(outside.shards[0].node()->name(),
                                                      {"table", {4, 2}, {0}}),
              Code::kInvalidArgument, "offset of the rank");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(monitored_session)

// A hook that feeds `x` and runs `op` in every step (TensorFlow's SessionRunArgs feed_dict and
// fetched operations).
class FeedingHook : public SessionRunHook {
 public:
  FeedingHook(Output x, Operation op) : x_(std::move(x)), op_(std::move(op)) {}
  std::vector<Output> before_run(RunContext& context) override {
    context.add_feed(x_, Tensor(static_cast<double>(++fed_)));
    context.add_target(op_);
    return {};
  }

 private:
  Output x_;
  Operation op_;
  int fed_ = 0;
};

BOOST_AUTO_TEST_CASE(hooks_feed_tensors_and_run_operations) {
  auto server = value_or_throw(Server::create_local_server());
  Regression m;
  Output x = ops::Placeholder(m.root.with_op_name("fed"), DataType::kDouble, PartialShape({}));
  Output twice = ops::Mul(m.root, x, 2.0);
  Operation bump = ops::AssignAdd(m.root, m.step.ref, Tensor(int64_t{1})).op();
  MonitoredTrainingSessionOptions options;
  options.master = server->target();
  options.hooks = {std::make_shared<FeedingHook>(x, bump)};
  auto session = value_or_throw(MonitoredTrainingSession::create(m.root, options));
  BOOST_TEST(value_or_throw(session->run({twice})).at(0).scalar<double>() == 2.0);
  BOOST_TEST(value_or_throw(session->run({twice})).at(0).scalar<double>() == 4.0);
  BOOST_TEST(value_or_throw(session->session().run(m.step.ref)).scalar<int64_t>() == 2);
  // The caller feeding the hook's tensor too is an error naming it.
  check_error(session->run({twice}, {{x, Tensor(1.0)}}).status(), Code::kInvalidArgument,
              "same tensor is fed by a SessionRunHook and the caller, or by two hooks: 'fed:0'");
}

// A hook that asks for a trace of every second step (TensorFlow's ProfilerHook asks so through
// SessionRunArgs.options) and keeps what each step reported.
class TracingHook : public SessionRunHook {
 public:
  std::vector<Output> before_run(RunContext& context) override {
    if (++steps_ % 2 == 0) {
      context.merge_options(
          {.trace_level = TraceLevel::kFullTrace, .output_partition_graphs = true});
    }
    return {};
  }
  Status after_run(RunContext& context, const std::vector<Tensor>& values) override {
    seen.push_back(context.run_metadata().step_stats);
    graphs.push_back(context.run_metadata().partition_graphs.size());
    levels.push_back(context.run_options().trace_level);
    timeouts.push_back(context.run_options().timeout_ms);
    return Status::OK();
  }
  std::vector<std::vector<DeviceStepStats>> seen;
  std::vector<size_t> graphs;  // how many partition graphs each step reported
  std::vector<TraceLevel> levels;
  std::vector<int64_t> timeouts;

 private:
  int steps_ = 0;
};

BOOST_AUTO_TEST_CASE(a_hook_asks_for_a_trace_and_sees_the_step_statistics) {
  auto server = value_or_throw(Server::create_local_server());
  Regression m;
  Output doubled = ops::Mul(m.root.with_op_name("doubled"), m.w.ref, 2.0);
  MonitoredTrainingSessionOptions options;
  options.master = server->target();
  auto hook = std::make_shared<TracingHook>();
  options.hooks = {hook};
  auto session = value_or_throw(MonitoredTrainingSession::create(m.root, options));
  RunMetadata metadata;
  for (int step = 0; step < 3; ++step) {
    value_or_throw(session->run({doubled}, {}, {}, {.timeout_ms = 20000}, &metadata));
  }
  BOOST_TEST_REQUIRE(hook->seen.size() == 3u);
  BOOST_TEST(hook->seen[0].empty());
  BOOST_TEST(hook->seen[2].empty());
  BOOST_TEST(hook->graphs == std::vector<size_t>({0, 1, 0}), boost::test_tools::per_element());
  BOOST_TEST((hook->levels[1] == TraceLevel::kFullTrace));
  BOOST_TEST((hook->levels[0] == TraceLevel::kNoTrace));
  BOOST_TEST_REQUIRE(hook->seen[1].size() == 1u);
  const DeviceStepStats& device = hook->seen[1][0];
  BOOST_TEST(device.device.find("/device:CPU:0") != std::string::npos);
  auto node = std::find_if(device.node_stats.begin(), device.node_stats.end(),
                           [](const NodeExecStats& n) { return n.node_name == "doubled"; });
  BOOST_TEST_REQUIRE((node != device.node_stats.end()));
  BOOST_TEST(node->timeline_label.starts_with("doubled = Mul("));
  BOOST_TEST(node->all_start_micros > 0);
  BOOST_TEST(node->op_start_rel_micros <= node->op_end_rel_micros);
  BOOST_TEST(node->op_end_rel_micros <= node->all_end_rel_micros);
  BOOST_TEST_REQUIRE(node->outputs.size() == 1u);
  BOOST_TEST((node->outputs[0].dtype == DataType::kDouble));
  BOOST_TEST(node->outputs[0].shape == std::vector<int64_t>({3, 1}),
             boost::test_tools::per_element());
  BOOST_TEST(node->outputs[0].bytes == 24);
  // The caller's metadata is the last step's (not traced).
  BOOST_TEST(metadata.step_stats.empty());
  value_or_throw(session->run({doubled}, {}, {}, {}, &metadata));
  BOOST_TEST(metadata.step_stats.size() == 1u);  // the fourth step: traced
  // The hook asked for no timeout: the caller's stands.
  BOOST_TEST(hook->timeouts[0] == 20000);
  BOOST_TEST(hook->timeouts[3] == 0);
}

BOOST_AUTO_TEST_CASE(a_scaffold_replaces_each_start_up_step) {
  auto server = value_or_throw(Server::create_local_server());
  Regression m;
  // A variable outside the model's (not a global variable): local_init_op sets it, once the
  // ready_for_local_init_op (here: "is w initialised?") names nothing.
  Output local =
      ops::Variable(m.root.with_op_name("local_counter"), TensorShape{}, DataType::kInt64);
  auto w_missing = [&](const Scope& s) {  // as tf.report_uninitialized_variables([w])
    auto uninitialised = ops::LogicalNot(s, ops::Pack(s, {ops::IsVariableInitialized(s, m.w.ref)}));
    auto where = ops::Reshape(s, ops::Where(s, uninitialised), {-1});
    return ops::GatherV2(s, Tensor::from_vector<std::string>({"w"}), where, 0);
  };
  MonitoredTrainingSessionOptions options;
  options.master = server->target();
  options.scaffold.init_op =
      ops::Assign(m.root, m.w.ref, value_or_throw(Tensor::from_vector<double>({1, 2, 3}, {3, 1})))
          .op();
  int init_fn_calls = 0;
  options.scaffold.init_fn = [&](Session& session) {
    ++init_fn_calls;
    return session.run_targets({ops::Assign(m.root, m.step.ref, Tensor(int64_t{40})).op()});
  };
  options.scaffold.ready_for_local_init_op = w_missing(m.root);
  options.scaffold.local_init_op = ops::Assign(m.root, local, Tensor(int64_t{7})).op();
  auto session = value_or_throw(MonitoredTrainingSession::create(m.root, options));
  BOOST_TEST(init_fn_calls == 1);
  BOOST_TEST(values_of(session->session(), m.w.ref) == (std::vector<double>{1, 2, 3}));
  BOOST_TEST(value_or_throw(session->session().run(m.step.ref)).scalar<int64_t>() == 40);
  BOOST_TEST(value_or_throw(session->session().run(local)).scalar<int64_t>() == 7);
  BOOST_REQUIRE(session->close().ok());

  // An init op that leaves the model unready: start-up fails naming what is not ready.
  auto other = value_or_throw(Server::create_local_server());
  Regression n;
  MonitoredTrainingSessionOptions bad;
  bad.master = other->target();
  bad.scaffold.init_op = ops::NoOp(n.root);
  check_error(MonitoredTrainingSession::create(n.root, bad).status(), Code::kFailedPrecondition,
              "init operations did not make the model ready: w, global_step are not initialised");
  // checkpoint_filename_with_path must exist; it and checkpoint_dir exclude each other.
  MonitoredTrainingSessionOptions missing;
  missing.master = other->target();
  missing.checkpoint_filename_with_path = "/nonexistent/model.ckpt-1.npz";
  BOOST_TEST(!MonitoredTrainingSession::create(n.root, missing).ok());
  missing.checkpoint_dir = "/tmp";
  check_error(MonitoredTrainingSession::create(n.root, missing).status(), Code::kInvalidArgument,
              "give checkpoint_dir ('/tmp') or checkpoint_filename_with_path");
}

BOOST_AUTO_TEST_CASE(trains_checkpoints_and_resumes) {
  TempDir dir;
  auto server = value_or_throw(Server::create_local_server());
  std::vector<double> trained;
  {
    Regression m;
    GradientDescentOptimizer sgd(0.2);
    auto train = value_or_throw(sgd.minimize(m.root, m.loss, m.step.ref));
    std::ostringstream log;
    MonitoredTrainingSessionOptions options;
    options.master = server->target();
    options.checkpoint_dir = dir.path().string();
    options.save_checkpoint_steps = 5;
    options.summaries = {{"loss", m.loss}};
    options.save_summaries_steps = 5;
    options.hooks = {std::make_shared<StopAtStepHook>(m.step.ref, 12),
                     std::make_shared<LoggingTensorHook>(
                         std::vector<std::pair<std::string, Output>>{{"loss", m.loss}}, 4, log)};
    auto session = value_or_throw(MonitoredTrainingSession::create(m.root, options));
    BOOST_TEST(!session->restored_from().has_value());
    int steps = 0;
    while (!session->should_stop()) {
      BOOST_REQUIRE(session->run({}, Regression::batch(m, 8 * steps, 8), {train}).ok());
      ++steps;
    }
    BOOST_TEST(steps == 12);
    trained = values_of(session->session(), m.w.ref);
    BOOST_REQUIRE(session->close().ok());
    // Lines at steps 0, 4 and 8.
    std::string lines = log.str();
    BOOST_TEST(std::count(lines.begin(), lines.end(), '\n') == 3, lines);
  }
  auto latest = value_or_throw(latest_checkpoint(dir.path().string()));
  BOOST_REQUIRE(latest.has_value());
  BOOST_TEST(fs::path(*latest).filename() == "model.ckpt-12");  // sharded, as TensorFlow's
  BOOST_TEST(fs::exists(checkpoint_shard_file(*latest, 0, 1)));
  bool found_events = false;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    if (entry.path().filename().string().rfind("events.out.tfevents.", 0) != 0) continue;
    found_events = true;
    // The pid keeps apart the files of two runs started in the same second.
    std::string name = entry.path().filename().string();
    BOOST_TEST(name.ends_with("." + std::to_string(::getpid())), name);
    auto scalars = value_or_throw(EventReader::read_scalars(entry.path().string()));
    BOOST_TEST(!scalars.empty());
    BOOST_TEST(scalars.front().tag == "loss");
  }
  BOOST_TEST(found_events);

  // A new session on a new server restores instead of initialising.
  auto again = value_or_throw(Server::create_local_server());
  Regression m;
  GradientDescentOptimizer sgd(0.2);
  auto train = value_or_throw(sgd.minimize(m.root, m.loss, m.step.ref));
  MonitoredTrainingSessionOptions options;
  options.master = again->target();
  options.checkpoint_dir = dir.path().string();
  options.hooks = {std::make_shared<StopAtStepHook>(m.step.ref, 15)};
  auto session = value_or_throw(MonitoredTrainingSession::create(m.root, options));
  BOOST_REQUIRE(session->restored_from().has_value());
  BOOST_TEST(value_or_throw(session->session().run(m.step.ref)).scalar<int64_t>() == 12);
  BOOST_TEST(values_of(session->session(), m.w.ref) == trained);
  int steps = 0;
  while (!session->should_stop()) {
    BOOST_REQUIRE(session->run({}, Regression::batch(m, 0, 8), {train}).ok());
    ++steps;
  }
  BOOST_TEST(steps == 3);
}

// A chief killed in the middle of a save leaves "<name>.tmp" files; the next chief removes
// them before it writes, and leaves every other file alone.
BOOST_AUTO_TEST_CASE(the_chief_removes_unfinished_checkpoint_files_at_start) {
  TempDir dir;
  fs::create_directories(dir.path());
  for (const char* name : {"model.ckpt-40.npz.tmp", "checkpoint.tmp", "notes.tmp", "keep.npz",
                           "model.ckpt-40.shard-00000-of-00002.npz.tmp.12.0"}) {
    std::ofstream(dir.path() / name) << "partial";
  }
  auto server = value_or_throw(Server::create_local_server());
  Regression m;
  MonitoredTrainingSessionOptions options;
  options.master = server->target();
  options.checkpoint_dir = dir.path().string();
  auto session = value_or_throw(MonitoredTrainingSession::create(m.root, options));
  BOOST_TEST(!fs::exists(dir.path() / "model.ckpt-40.npz.tmp"));
  BOOST_TEST(!fs::exists(dir.path() / "checkpoint.tmp"));
  BOOST_TEST(!fs::exists(dir.path() / "model.ckpt-40.shard-00000-of-00002.npz.tmp.12.0"));
  BOOST_TEST(fs::exists(dir.path() / "notes.tmp"));
  BOOST_TEST(fs::exists(dir.path() / "keep.npz"));
  BOOST_TEST(fs::exists(dir.path() / "model.ckpt-0.shard-00000-of-00001.npz"));  // at start

  // A worker that is not the chief never touches the directory.
  std::ofstream(dir.path() / "model.ckpt-41.npz.tmp") << "being written by the chief";
  options.is_chief = false;
  Regression same_model;
  auto worker = value_or_throw(MonitoredTrainingSession::create(same_model.root, options));
  BOOST_TEST(fs::exists(dir.path() / "model.ckpt-41.npz.tmp"));
}

// Trains `steps` steps of the regression with `hook`.
void train_with(const Regression& m, const Output& loss, int64_t steps,
                std::shared_ptr<SessionRunHook> hook) {
  auto server = value_or_throw(Server::create_local_server());
  GradientDescentOptimizer sgd(0.2);
  auto train = value_or_throw(sgd.minimize(m.root, loss, m.step.ref));
  MonitoredTrainingSessionOptions options;
  options.master = server->target();
  options.hooks = {std::make_shared<StopAtStepHook>(m.step.ref, steps), std::move(hook)};
  auto session = value_or_throw(MonitoredTrainingSession::create(m.root, options));
  for (int i = 0; !session->should_stop(); ++i) {
    BOOST_REQUIRE(session->run({}, Regression::batch(m, 8 * i, 8), {train}).ok());
  }
  BOOST_REQUIRE(session->close().ok());
}

BOOST_AUTO_TEST_CASE(progress_for_a_person_is_a_line_per_tenth_with_rate_and_eta) {
  Regression m;
  std::ostringstream out;
  train_with(m, m.loss, 20,
             std::make_shared<ProgressHook>(
                 m.step.ref, 20, std::vector<std::pair<std::string, Output>>{{"loss", m.loss}},
                 ProgressHook::Options{.style = ProgressHook::Style::kLines,
                                       .every_secs = 0.5,
                                       .examples_per_step = 8,
                                       .prefix = "job: "},
                 out));
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  // Steps 1 (the first), 2, 4, ..., 20: one line per tenth of 20 steps.
  BOOST_REQUIRE_MESSAGE(lines.size() == 11u, out.str());
  BOOST_TEST(
      std::regex_match(
          lines[0],
          std::regex(R"(job: step 1/20 \(5%\) \[\d+:\d\d<\?, \? steps/s\] loss=[0-9.e+-]+)")),
      lines[0]);
  for (int i = 1; i <= 10; ++i) {
    std::regex line(fmt::format(
        R"(job: step {}/20 \({}%\) \[\d+:\d\d<\d+:\d\d, [0-9.]+[kMG]? steps/s, [0-9.]+[kMG]? examples/s\] loss=[0-9.e+-]+)",
        2 * i, 10 * i));
    BOOST_TEST(std::regex_match(lines[i], line), lines[i]);
  }
}

BOOST_AUTO_TEST_CASE(progress_for_launch_is_protocol_lines_throttled_in_time) {
  Regression m;
  std::ostringstream out;
  // Every hour at most: the first report and the last.
  train_with(
      m, m.loss, 20,
      std::make_shared<ProgressHook>(m.step.ref, 20, std::vector<std::pair<std::string, Output>>{},
                                     ProgressHook::Options{.style = ProgressHook::Style::kLaunch,
                                                           .every_secs = 3600,
                                                           .examples_per_step = 0,
                                                           .prefix = ""},
                                     out));
  BOOST_TEST(out.str() == "troupe-progress 1 20\ntroupe-progress 20 20\n");
}

BOOST_AUTO_TEST_CASE(summaries_get_steps_and_examples_per_second) {
  TempDir dir;
  Regression m;
  auto server = value_or_throw(Server::create_local_server());
  GradientDescentOptimizer sgd(0.2);
  auto train = value_or_throw(sgd.minimize(m.root, m.loss, m.step.ref));
  MonitoredTrainingSessionOptions options;
  options.master = server->target();
  options.checkpoint_dir = dir.path().string();
  options.summaries = {{"loss", m.loss}};
  options.save_summaries_steps = 5;
  options.examples_per_step = 8;
  options.hooks = {std::make_shared<StopAtStepHook>(m.step.ref, 12)};
  auto session = value_or_throw(MonitoredTrainingSession::create(m.root, options));
  for (int i = 0; !session->should_stop(); ++i) {
    BOOST_REQUIRE(session->run({}, Regression::batch(m, 8 * i, 8), {train}).ok());
  }
  BOOST_REQUIRE(session->close().ok());
  auto scalars = scalars_in(dir.path());
  // Saves at steps 1, 6 and 11; the rates from the second save on.
  BOOST_TEST(steps_of(scalars["loss"]) == (std::vector<int64_t>{1, 6, 11}),
             boost::test_tools::per_element());
  BOOST_TEST(steps_of(scalars["global_step/sec"]) == (std::vector<int64_t>{6, 11}),
             boost::test_tools::per_element());
  BOOST_REQUIRE(scalars["examples/sec"].size() == 2u);
  for (size_t i = 0; i < 2; ++i) {
    float steps_per_sec = scalars["global_step/sec"][i].value;
    BOOST_TEST(steps_per_sec > 0);
    BOOST_TEST(scalars["examples/sec"][i].value == 8 * steps_per_sec,
               boost::test_tools::tolerance(1e-5f));
  }
}

BOOST_AUTO_TEST_CASE(evaluations_are_written_printed_and_not_repeated) {
  TempDir dir;
  Regression m;
  auto server = value_or_throw(Server::create_local_server());
  GradientDescentOptimizer sgd(0.2);
  auto train = value_or_throw(sgd.minimize(m.root, m.loss, m.step.ref));
  int calls = 0;
  auto evaluate = [&](Session& session) -> StatusOr<EvaluationHook::Results> {
    ++calls;
    TROUPE_ASSIGN_OR_RETURN(Tensor w, session.run(m.w.ref));
    return EvaluationHook::Results{{"w0", w.data<double>()[0]}, {"calls", calls}};
  };
  std::ostringstream out;
  auto hook = std::make_shared<EvaluationHook>((dir.path() / "eval").string(), m.step.ref, 5,
                                               evaluate, "job: ", out);
  MonitoredTrainingSessionOptions options;
  options.master = server->target();
  options.hooks = {std::make_shared<StopAtStepHook>(m.step.ref, 12), hook};
  auto session = value_or_throw(MonitoredTrainingSession::create(m.root, options));
  for (int i = 0; !session->should_stop(); ++i) {
    BOOST_REQUIRE(session->run({}, Regression::batch(m, 8 * i, 8), {train}).ok());
  }
  // At the multiples of 5 after the first step.
  BOOST_TEST(calls == 2);
  std::regex lines(R"(job: evaluation at step 5: w0=[0-9.e+-]+ calls=1\n)"
                   R"(job: evaluation at step 10: w0=[0-9.e+-]+ calls=2\n)");
  BOOST_TEST(std::regex_match(out.str(), lines), out.str());
  std::string printed = out.str();
  // At the step of the last evaluation the model is as it was: no new one.
  auto again = value_or_throw(hook->evaluate_now(session->session(), 10));
  BOOST_TEST(calls == 2);
  BOOST_TEST(again.at(1).second == 2);
  auto last = value_or_throw(hook->evaluate_now(session->session(), 12, /*print_line=*/false));
  BOOST_TEST(calls == 3);
  BOOST_TEST(last.at(0).second == values_of(session->session(), m.w.ref).at(0));
  BOOST_TEST(out.str() == printed);
  BOOST_REQUIRE(session->close().ok());
  auto scalars = scalars_in(dir.path() / "eval");
  BOOST_TEST(steps_of(scalars["w0"]) == (std::vector<int64_t>{5, 10, 12}),
             boost::test_tools::per_element());
  BOOST_TEST(scalars["w0"].back().value == static_cast<float>(last.at(0).second));
}

BOOST_AUTO_TEST_CASE(nan_loss_fails_training) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto v = make_variable(root, "v", Tensor(1.0));
  auto loss = ops::Log(root, ops::Neg(root, v.ref));  // log(-1) = NaN
  MonitoredTrainingSessionOptions options;
  options.master = server->target();
  options.hooks = {std::make_shared<NanTensorHook>(loss)};
  auto session = value_or_throw(MonitoredTrainingSession::create(root, options));
  check_error(session->run({loss}).status(), Code::kInvalidArgument, "NaN loss during training");
  BOOST_TEST(session->should_stop());
}

// Counts its calls; fails begin() or after_create_session() when told to.
class FailingHook : public SessionRunHook {
 public:
  explicit FailingHook(bool fail_begin) : fail_begin_(fail_begin) {}
  Status begin(const Scope&) override {
    return fail_begin_ ? errors::Internal("begin failed") : Status::OK();
  }
  Status after_create_session(Session&) override { return errors::Internal("start failed"); }
  Status end(Session&) override {
    ++ends;
    return Status::OK();
  }
  int ends = 0;

 private:
  bool fail_begin_;
};

BOOST_AUTO_TEST_CASE(a_session_that_fails_to_start_ends_cleanly_without_end_hooks) {
  auto server = value_or_throw(Server::create_local_server());
  for (bool fail_begin : {true, false}) {
    Regression m;
    auto hook = std::make_shared<FailingHook>(fail_begin);
    MonitoredTrainingSessionOptions options;
    options.master = server->target();
    options.hooks = {hook};
    check_error(MonitoredTrainingSession::create(m.root, options).status(), Code::kInternal,
                fail_begin ? "begin failed" : "start failed");
    BOOST_TEST(hook->ends == 0);
  }
  // Nor does a master that cannot be reached crash it.
  Regression m;
  MonitoredTrainingSessionOptions options;
  options.master = "inproc://999999";
  check_error(MonitoredTrainingSession::create(m.root, options).status(), Code::kNotFound, "");
}

BOOST_AUTO_TEST_CASE(a_worker_waits_for_the_chief) {
  auto cluster = value_or_throw(LocalCluster::start(1, 2));
  // Both build the model with its variables on the ps task.
  auto placed = [&](const Scope& root) {
    return root.with_device_function(
        value_or_throw(replica_device_setter(cluster->cluster(), "/job:worker")));
  };
  // The non-chief starts first and waits; it proceeds once the chief has initialised.
  Scope worker_root = Scope::new_root();
  Regression worker_model(worker_root, placed(worker_root));
  MonitoredTrainingSessionOptions worker_options;
  worker_options.master = value_or_throw(cluster->target("worker", 1));
  worker_options.is_chief = false;
  std::unique_ptr<MonitoredTrainingSession> worker;
  Status worker_status;
  std::thread waiting([&] {
    auto created = MonitoredTrainingSession::create(worker_model.root, worker_options);
    worker_status = created.status();
    if (created.ok()) worker = std::move(created).value();
  });
  // Not a condition: the test checks that something does not happen (the worker does not
  // start before the chief initialises the model), so it can only look after a while.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  BOOST_TEST(worker == nullptr);  // still waiting
  Scope chief_root = Scope::new_root();
  Regression chief_model(chief_root, placed(chief_root));
  MonitoredTrainingSessionOptions chief_options;
  chief_options.master = value_or_throw(cluster->target("worker", 0));
  auto chief = value_or_throw(MonitoredTrainingSession::create(chief_model.root, chief_options));
  waiting.join();
  BOOST_REQUIRE_MESSAGE(worker_status.ok(), worker_status.to_string());
  BOOST_TEST(values_of(worker->session(), worker_model.w.ref) ==
             (std::vector<double>{0.5, 0.5, 0.5}));

  // Without a chief, a worker gives up at its deadline.
  Regression lonely_model;
  MonitoredTrainingSessionOptions lonely;
  lonely.is_chief = false;
  lonely.ready_timeout_ms = 300;
  auto lonely_server = value_or_throw(Server::create_local_server());
  lonely.master = lonely_server->target();
  check_error(MonitoredTrainingSession::create(lonely_model.root, lonely).status(),
              Code::kDeadlineExceeded, "the chief did not initialise the model");
}

// A stop request (Ctrl-C in Python, SIGINT in troupe train) ends the wait for the chief.
BOOST_AUTO_TEST_CASE(a_stop_request_ends_the_wait_for_the_chief) {
  Regression model;
  auto server = value_or_throw(Server::create_local_server());
  MonitoredTrainingSessionOptions options;
  options.master = server->target();
  options.is_chief = false;
  std::stop_source stop;
  options.stop = stop.get_token();
  auto started = std::chrono::steady_clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.request_stop();
  });
  auto created = MonitoredTrainingSession::create(model.root, options);
  stopper.join();
  auto waited = std::chrono::steady_clock::now() - started;
  check_error(created.status(), Code::kCancelled, "stopped while waiting for the chief");
  // Within a poll of the request, far from the 300 s the wait would otherwise take.
  BOOST_TEST(waited < std::chrono::seconds(5));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(sync_replicas)

// Two synchronous workers with batch B reach the same variables as one worker with batch 2B on
// the same data: each update averages the two half-batch gradients.
void two_sync_workers_equal_one_of_twice_the_batch(DataType step_dtype) {
  constexpr int kSteps = 6;
  constexpr int kBatch = 4;
  constexpr double kRate = 0.3;

  // One worker, batch 2B, plain SGD.
  auto single = value_or_throw(Server::create_local_server());
  Regression reference;
  GradientDescentOptimizer sgd(kRate);
  auto train = value_or_throw(sgd.minimize(reference.root, reference.loss, reference.step.ref));
  Session session = value_or_throw(Session::create(single->target()));
  throw_if_error(session.run_targets({global_variables_initializer(reference.root)}));
  for (int step = 0; step < kSteps; ++step) {
    value_or_throw(
        session.run(Regression::batch(reference, step * 2 * kBatch, 2 * kBatch), {}, {train}));
  }
  std::vector<double> expected = values_of(session, reference.w.ref);

  // Two synchronous workers, batch B each, on 1 ps.
  auto cluster = value_or_throw(LocalCluster::start(1, 2));
  std::vector<std::vector<double>> results(2);
  std::vector<Status> statuses(2);
  auto run_worker = [&](int task) {
    auto setter = value_or_throw(
        replica_device_setter(cluster->cluster(), fmt::format("/job:worker/task:{}", task)));
    Scope root = Scope::new_root();
    Regression m(root, root.with_device_function(setter), step_dtype);
    SyncReplicasOptimizer sync(std::make_shared<GradientDescentOptimizer>(kRate), 2, 2);
    Status built = sync.minimize(root.with_device_function(setter), m.loss, m.step,
                                 fmt::format("/job:worker/task:{}", task));
    if (!built.ok()) {
      statuses[task] = built;
      return;
    }
    MonitoredTrainingSessionOptions options;
    options.master = value_or_throw(cluster->target("worker", task));
    options.is_chief = task == 0;
    options.hooks = {std::make_shared<StopAtStepHook>(m.step.ref, kSteps),
                     std::make_shared<SyncReplicasHook>(
                         sync, task == 0, value_or_throw(cluster->target("worker", task)))};
    auto created = MonitoredTrainingSession::create(root, options);
    if (!created.ok()) {
      statuses[task] = created.status();
      return;
    }
    auto& mts = **created;
    // Step k: worker 0 takes the first half of the 2B batch, worker 1 the second.
    for (int step = 0; !mts.should_stop() && step < kSteps; ++step) {
      auto ran = mts.run({}, Regression::batch(m, step * 2 * kBatch + task * kBatch, kBatch),
                         {sync.train_op()});
      if (!ran.ok()) {
        statuses[task] = ran.status();
        return;
      }
    }
    results[task] = values_of(mts.session(), m.w.ref);
    statuses[task] = mts.close();
  };
  std::thread w0(run_worker, 0), w1(run_worker, 1);
  w0.join();
  w1.join();
  for (int task = 0; task < 2; ++task) {
    BOOST_REQUIRE_MESSAGE(statuses[task].ok(), "worker " << task << ": " << statuses[task]);
    BOOST_REQUIRE(results[task].size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      BOOST_TEST(
          std::abs(results[task][i] - expected[i]) < 1e-9,
          "worker " << task << " w[" << i << "] " << results[task][i] << " vs " << expected[i]);
    }
  }
}

BOOST_AUTO_TEST_CASE(two_workers_of_batch_b_equal_one_worker_of_batch_2b) {
  two_sync_workers_equal_one_of_twice_the_batch(DataType::kInt64);
}

// TensorFlow 1.x's usual int32 global step (this crashed the process with SIGSEGV).
BOOST_AUTO_TEST_CASE(sync_replicas_train_with_an_int32_global_step) {
  two_sync_workers_equal_one_of_twice_the_batch(DataType::kInt32);
}

// Plain SGD whose updates first check the (averaged) gradient for NaN and infinity.
class CheckedSgd : public GradientDescentOptimizer {
 public:
  using GradientDescentOptimizer::GradientDescentOptimizer;

 protected:
  Output apply_update(const Scope& scope, const Output& grad, const Output& indices,
                      const Output& var) override {
    return GradientDescentOptimizer::apply_update(
        scope, ops::CheckNumerics(scope, grad, "the averaged gradient"), indices, var);
  }
};

// One worker of a synchronous job of 2 workers on `cluster`: the Regression model under a
// replica_device_setter, its SyncReplicasOptimizer over `optimizer`, and a monitored session
// with a SyncReplicasHook in which every step has a 60 s deadline (a hang fails the test).
struct SyncWorker {
  SyncWorker(LocalCluster& cluster, int task, std::shared_ptr<Optimizer> optimizer)
      : setter(value_or_throw(
            replica_device_setter(cluster.cluster(), fmt::format("/job:worker/task:{}", task)))),
        model(root, root.with_device_function(setter)),
        sync(std::move(optimizer), 2, 2) {
    throw_if_error(sync.minimize(root.with_device_function(setter), model.loss, model.step,
                                 fmt::format("/job:worker/task:{}", task)));
    MonitoredTrainingSessionOptions options;
    options.master = value_or_throw(cluster.target("worker", task));
    options.is_chief = task == 0;
    SessionConfig config;
    config.operation_timeout_ms = 60000;
    options.config = config;
    options.hooks = {
        std::make_shared<SyncReplicasHook>(sync, task == 0, options.master, Operation(), config)};
    session = value_or_throw(MonitoredTrainingSession::create(root, options));
  }

  Scope root = Scope::new_root();
  DeviceFunction setter;
  Regression model;
  SyncReplicasOptimizer sync;
  std::unique_ptr<MonitoredTrainingSession> session;
};

// Runs `body` on a thread of its own; an exception (which would end the test program there)
// becomes *failed.
std::thread on_thread(std::function<void()> body, Status* failed) {
  return std::thread([body = std::move(body), failed] {
    try {
      body();
    } catch (const std::exception& e) {
      *failed = errors::Internal("{}", e.what());
    }
  });
}

// When the chief's update fails, no token will come: the workers waiting for one stop
// (OutOfRange, the token queue closed) instead of waiting for ever, and the chief's session
// reports the update's error. (A silent hang of a whole synchronous job was seen once in CI.)
BOOST_AUTO_TEST_CASE(a_failed_chief_update_stops_every_worker_and_names_why) {
  constexpr int kSteps = 6;
  auto cluster = value_or_throw(LocalCluster::start(1, 2));
  std::vector<Status> ran(2), closed(2);
  auto run_worker = [&](int task) {
    SyncWorker worker(*cluster, task, std::make_shared<CheckedSgd>(0.1));
    for (int step = 0; step < kSteps && ran[task].ok(); ++step) {
      FeedDict feeds = Regression::batch(worker.model, step * 8 + task * 4, 4);
      if (task == 1 && step == 2) {  // a NaN in worker 1's batch: the average is NaN
        feeds[0].second.data<double>()[0] = std::nan("");
      }
      ran[task] = worker.session->run({}, feeds, {worker.sync.train_op()}).status();
    }
    closed[task] = worker.session->close();
  };
  std::thread w0 = on_thread([&] { run_worker(0); }, &ran[0]);
  std::thread w1 = on_thread([&] { run_worker(1); }, &ran[1]);
  w0.join();
  w1.join();
  for (int task = 0; task < 2; ++task)
    check_error(ran[task], Code::kOutOfRange, "");
  check_error(closed[0], Code::kInvalidArgument, "the averaged gradient");
  BOOST_TEST(closed[1].ok(), closed[1]);
}

// The end of synchronous training: a worker that takes one step more than the others (it read
// the global step before the last update landed) waits for a token that no update will make.
// When the chief's session ends, its hook puts a token per replica in the queue: the worker's
// step ends instead of waiting for ever (TensorFlow's waits; a hang of the Python mnist_replica
// example in CI). Here the chief takes no step at all, so the worker's one gradient never makes
// an update, whichever of the two comes first.
BOOST_AUTO_TEST_CASE(a_worker_waiting_for_a_token_ends_its_step_when_the_chief_ends) {
  auto cluster = value_or_throw(LocalCluster::start(1, 2));
  Status chief_closed, worker_step, worker_closed;
  std::atomic<bool> worker_stepping = false;
  auto chief = [&] {
    SyncWorker worker(*cluster, 0, std::make_shared<GradientDescentOptimizer>(0.1));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!worker_stepping.load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // likely waiting by now
    chief_closed = worker.session->close();
  };
  auto other = [&] {
    SyncWorker worker(*cluster, 1, std::make_shared<GradientDescentOptimizer>(0.1));
    worker_stepping = true;
    worker_step =
        worker.session->run({}, Regression::batch(worker.model, 0, 4), {worker.sync.train_op()})
            .status();
    worker_closed = worker.session->close();
  };
  std::thread w0 = on_thread(chief, &chief_closed), w1 = on_thread(other, &worker_step);
  w0.join();
  w1.join();
  BOOST_TEST(chief_closed.ok(), chief_closed);
  BOOST_TEST(worker_step.ok(), worker_step);
  BOOST_TEST(worker_closed.ok(), worker_closed);
}

// A step fetched with the update may be read before the update lands, by more than one step in
// synchronous training: StopAtStepHook reads it again before it stops, as TensorFlow's does.
BOOST_AUTO_TEST_CASE(stop_at_step_reads_the_step_again_before_it_stops) {
  auto server = value_or_throw(Server::create_local_server());
  Regression m;
  Session session = value_or_throw(Session::create(server->target()));
  throw_if_error(session.run_targets({global_variables_initializer(m.root)}));
  throw_if_error(session.run_targets({ops::Assign(m.root, m.step.ref, int64_t{7}).op()}));
  StopAtStepHook hook(m.step.ref, 10);
  RunContext stale(session);  // read 9: 10 reached if this step made the update, but it did not
  throw_if_error(hook.after_run(stale, {Tensor(int64_t{9})}));
  BOOST_TEST(!stale.stop_requested());
  throw_if_error(session.run_targets({ops::Assign(m.root, m.step.ref, int64_t{10}).op()}));
  RunContext reached(session);
  throw_if_error(hook.after_run(reached, {Tensor(int64_t{9})}));
  BOOST_TEST(reached.stop_requested());
  RunContext early(session);  // 8 + 1 < 10: no second read
  throw_if_error(hook.after_run(early, {Tensor(int64_t{8})}));
  BOOST_TEST(!early.stop_requested());
}

BOOST_AUTO_TEST_CASE(sync_replicas_refuse_a_global_step_that_is_not_an_integer) {
  Scope root = Scope::new_root();
  Regression m(root);
  ModelVariable float_step = make_variable(root, "float_step", Tensor(0.0f), false);
  SyncReplicasOptimizer sync(std::make_shared<GradientDescentOptimizer>(0.1), 1, 1);
  check_error(sync.minimize(root, m.loss, float_step, "/job:localhost/task:0"),
              Code::kInvalidArgument, "global step variable 'float_step' is float32");
}

BOOST_AUTO_TEST_CASE(stale_gradients_are_dropped) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto acc = ops::ConditionalAccumulator(root, DataType::kFloat, PartialShape({2}));
  auto step = ops::Placeholder(root, DataType::kInt64);
  auto apply = ops::AccumulatorApplyGradient(root, acc, step, Tensor::from_vector<float>({2, 4}));
  auto count = ops::AccumulatorNumAccumulated(root, acc);
  auto advance = ops::AccumulatorSetGlobalStep(root, acc, int64_t{5});
  auto take = ops::AccumulatorTakeGradient(root, acc, 2, DataType::kFloat);
  Session session = value_or_throw(Session::create(server->target()));
  throw_if_error(session.run_targets({apply}, {{step, Tensor(int64_t{0})}}));
  BOOST_TEST(value_or_throw(session.run(count)).scalar<int32_t>() == 1);
  throw_if_error(session.run_targets({advance}));
  throw_if_error(
      session.run_targets({apply}, {{step, Tensor(int64_t{3})}}));  // older than 5: dropped
  BOOST_TEST(value_or_throw(session.run(count)).scalar<int32_t>() == 1);
  throw_if_error(session.run_targets({apply}, {{step, Tensor(int64_t{5})}}));
  BOOST_TEST(value_or_throw(session.run(count)).scalar<int32_t>() == 2);
  BOOST_TEST(value_or_throw(session.run(take)).to_vector<float>() == (std::vector<float>{2, 4}));
  BOOST_TEST(value_or_throw(session.run(count)).scalar<int32_t>() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
