// Tests for graph/partitioned_variables: fixed_size_partitioner's shard shapes and names,
// shards placed round-robin on the ps tasks with each gather beside its shard, and the errors.
// (The lookup's values and its sparse gradient run in test/devices/embedding_lookup_test.cpp.)
#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "troupe/graph/device_setter.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/partitioned_variables.hpp"

namespace troupe {
namespace {
using testing::check_error;

Output zeros_of(const Scope& s, const TensorShape& shape, int) {
  return ops::Const(s, zeros(DataType::kFloat, shape));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(partitioned_variables)

BOOST_AUTO_TEST_CASE(shards_split_the_rows_as_fixed_size_partitioner) {
  Scope root = Scope::new_root();
  auto table = value_or_throw(make_partitioned_variable(root, "emb", {10, 4}, 3, zeros_of));
  BOOST_REQUIRE(table.shards.size() == 3u);
  // 10 rows in 3: 4, 3, 3 (the first 10 % 3 shards one longer).
  const std::vector<int64_t> rows = {4, 3, 3};
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST(table.shards[i].ref.node()->name() == "emb/part_" + std::to_string(i));
    const PartialShape& shape = table.shards[i].ref.node()->output_shape(0);
    BOOST_TEST(shape.to_string() == TensorShape({rows[i], 4}).to_string());
  }
  BOOST_TEST(root.ok(), root.status().to_string());
}

BOOST_AUTO_TEST_CASE(shards_go_round_robin_to_the_ps_tasks_and_gathers_beside_them) {
  auto cluster = value_or_throw(
      ClusterSpec::create({{"ps", {"ps0:2222", "ps1:2222"}}, {"worker", {"worker0:2222"}}}));
  auto setter = value_or_throw(replica_device_setter(cluster, "/job:worker/task:0"));
  Scope placed = Scope::new_root().with_device_function(setter);
  auto table = value_or_throw(make_partitioned_variable(placed, "emb", {100, 8}, 2, zeros_of));
  BOOST_TEST(table.shards[0].ref.node()->requested_device() == "/job:ps/task:0");
  BOOST_TEST(table.shards[1].ref.node()->requested_device() == "/job:ps/task:1");
  Output ids = ops::Placeholder(placed, DataType::kInt64, PartialShape({-1, 3}));
  Output rows = embedding_lookup(placed, table, ids);
  BOOST_REQUIRE(placed.ok());
  BOOST_TEST(rows.node()->output_shape(rows.index()).to_string() == "[?,3,8]");
  int gathers = 0;
  for (int id = 0; id < placed.graph().num_nodes(); ++id) {
    const Node& node = placed.graph().node(id);
    if (node.op_name() != "GatherV2") continue;
    const std::string shard = node.graph().node(node.inputs()[0].node).name();
    BOOST_TEST(node.requested_device() ==
               (shard == "emb/part_0" ? "/job:ps/task:0" : "/job:ps/task:1"));
    ++gathers;
  }
  BOOST_TEST(gathers == 2);
}

BOOST_AUTO_TEST_CASE(initial_values_are_built_beside_their_shards) {
  // As TensorFlow's get_variable: a shard's initial value is drawn on its ps, not computed on
  // the worker and sent whole.
  auto cluster = value_or_throw(
      ClusterSpec::create({{"ps", {"ps0:2222", "ps1:2222"}}, {"worker", {"worker0:2222"}}}));
  auto setter = value_or_throw(replica_device_setter(cluster, "/job:worker/task:0"));
  Scope placed = Scope::new_root().with_device_function(setter);
  auto table = value_or_throw(make_partitioned_variable(
      placed, "emb", {100, 8}, 2, [](const Scope& s, const TensorShape& shape, int) {
        return ops::RandomStandardNormal(s, ops::Const(s, Tensor::from_vector(shape.dims())),
                                         DataType::kFloat);
      }));
  int initial_value_nodes = 0;
  for (int id = 0; id < placed.graph().num_nodes(); ++id) {
    const Node& node = placed.graph().node(id);
    for (int shard = 0; shard < 2; ++shard) {
      const std::string part = "emb/part_" + std::to_string(shard);
      if (!node.name().starts_with(part + "_initial_value/")) continue;
      BOOST_TEST(node.requested_device() == "/job:ps/task:" + std::to_string(shard), node.name());
      // On the shard's device but not in its colocation group: a random op without a GPU
      // kernel may run on the CPU of a GPU shard's task.
      BOOST_TEST(node.def().find_attr("_class") == nullptr, node.name());
      ++initial_value_nodes;
    }
  }
  BOOST_TEST(initial_value_nodes == 4);  // a Const shape and a RandomStandardNormal per shard
  BOOST_TEST(table.shards[1].ref.node()->requested_device() == "/job:ps/task:1");
}

BOOST_AUTO_TEST_CASE(bad_shapes_and_shard_counts_are_errors_naming_the_variable) {
  Scope root = Scope::new_root();
  check_error(make_partitioned_variable(root, "emb", TensorShape{}, 1, zeros_of).status(),
              Code::kInvalidArgument, "partitioned variable 'emb': a shape of rank >= 1");
  check_error(make_partitioned_variable(root, "emb", {3, 2}, 4, zeros_of).status(),
              Code::kInvalidArgument, "'emb': 4 shards of 3 rows (expected 1 to 3 shards)");
  check_error(make_partitioned_variable(root, "emb", {3, 2}, 0, zeros_of).status(),
              Code::kInvalidArgument, "0 shards of 3 rows");
  auto wrong_shape = [](const Scope& s, const TensorShape&, int) {
    return ops::Const(s, zeros(DataType::kFloat, TensorShape{5}));
  };
  check_error(make_partitioned_variable(root, "rows", {3, 2}, 1, wrong_shape).status(),
              Code::kInvalidArgument,
              "variable 'rows/part_0': the initial value is float32 [5], expected float32 [3,2]");
  Scope other = Scope::new_root();
  check_error(
      make_partitioned_variable(other, "ids", {3, 2}, 1, zeros_of, DataType::kInt64).status(),
      Code::kInvalidArgument, "the initial value is float32 [3,2], expected int64 [3,2]");
  Scope third = Scope::new_root();
  auto nothing = [](const Scope&, const TensorShape&, int) { return Output(); };
  check_error(make_partitioned_variable(third, "none", {3, 2}, 1, nothing).status(),
              Code::kInvalidArgument,
              "variable 'none/part_0': the initial value function built no output");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
