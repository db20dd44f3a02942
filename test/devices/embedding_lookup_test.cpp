// embedding_lookup over partitioned variables (graph/partitioned_variables.hpp), run: the rows
// of every id in any number of shards ("div", as TensorFlow's), a gradient that reaches each
// shard as the IndexedSlices of its rows (a repeated id's rows summed by the update), and ids
// outside the table failing the step.
#include <boost/test/unit_test.hpp>

#include "run_graph.hpp"
#include "troupe/graph/optimizers.hpp"
#include "troupe/graph/partitioned_variables.hpp"

namespace troupe {
namespace {
using testing::check_error;
using testing::run_graph;

constexpr int64_t kRows = 10;

// Row r of the table is [r, 10 r]; shard i starts at the row fixed_size_partitioner gives it.
PartitionedVariable numbered_table(const Scope& s, int shards) {
  return value_or_throw(make_partitioned_variable(
      s, "table", {kRows, 2}, shards,
      [shards](const Scope& scope, const TensorShape& shape, int index) {
        const int64_t first = index * (kRows / shards) + std::min<int64_t>(index, kRows % shards);
        std::vector<float> values;
        for (int64_t r = first; r < first + shape.dim(0); ++r) {
          values.push_back(static_cast<float>(r));
          values.push_back(static_cast<float>(10 * r));
        }
        return ops::Const(scope, value_or_throw(Tensor::from_vector(values, shape)));
      }));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(embedding_lookup_over_shards)

BOOST_AUTO_TEST_CASE(every_id_finds_its_row_in_any_number_of_shards) {
  for (int shards : {1, 2, 3, 4, 10}) {
    for (DataType dtype : {DataType::kInt64, DataType::kInt32}) {
      Scope s = Scope::new_root();
      PartitionedVariable table = numbered_table(s, shards);
      Output ids = ops::Placeholder(s, dtype, PartialShape({-1, 3}));
      Output rows = embedding_lookup(s, table, ids);
      Operation init = global_variables_initializer(s);
      Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);
      value_or_throw(run_graph(s, {}, {}, {init}, &device));
      std::vector<int64_t> wanted = {9, 0, 4, 3, 3, 7};
      Tensor fed =
          dtype == DataType::kInt64
              ? value_or_throw(Tensor::from_vector(wanted, TensorShape{2, 3}))
              : value_or_throw(Tensor::from_vector(
                    std::vector<int32_t>(wanted.begin(), wanted.end()), TensorShape{2, 3}));
      auto got = value_or_throw(run_graph(s, {rows}, {{ids, fed}}, {}, &device));
      std::vector<float> expected;
      for (int64_t r : wanted) {
        expected.push_back(static_cast<float>(r));
        expected.push_back(static_cast<float>(10 * r));
      }
      BOOST_TEST_CONTEXT(shards << " shards, " << dtype_name(dtype) << " ids") {
        testing::check_tensor<float>(got[0], {2, 3, 2}, expected);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(the_gradient_updates_only_the_rows_looked_up_on_each_shard) {
  Scope s = Scope::new_root();
  PartitionedVariable table = numbered_table(s, 3);
  Output ids = ops::Const(s, Tensor::from_vector<int64_t>({8, 1, 8, 5}));
  Output loss = ops::Sum(s, embedding_lookup(s, table, ids), {0, 1});
  GradientDescentOptimizer sgd(1.0);
  auto grads = value_or_throw(sgd.compute_gradients(s, loss));
  BOOST_REQUIRE(grads.size() == 3u);
  for (const auto& gv : grads)
    BOOST_TEST(gv.gradient.is_sparse(), gv.variable.node()->name());
  Operation train = value_or_throw(sgd.apply_gradients(s, grads));
  Operation init = global_variables_initializer(s);
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);
  value_or_throw(run_graph(s, {}, {}, {init}, &device));
  value_or_throw(run_graph(s, {}, {}, {train}, &device));
  auto shards = value_or_throw(run_graph(
      s, {table.shards[0].ref, table.shards[1].ref, table.shards[2].ref}, {}, {}, &device));
  // Shards of 4, 3 and 3 rows; each looked-up row goes down by the times it was looked up.
  std::vector<float> all;
  for (const Tensor& shard : shards)
    all.insert(all.end(), shard.data<float>(), shard.data<float>() + shard.num_elements());
  for (int64_t r = 0; r < kRows; ++r) {
    const float times = r == 8 ? 2.f : (r == 1 || r == 5) ? 1.f : 0.f;
    BOOST_TEST(all[2 * r] == static_cast<float>(r) - times, "row " << r);
    BOOST_TEST(all[2 * r + 1] == static_cast<float>(10 * r) - times, "row " << r);
  }
}

BOOST_AUTO_TEST_CASE(an_id_outside_the_table_fails_the_step) {
  for (int64_t bad : {int64_t{10}, int64_t{-1}, int64_t{1000}}) {
    Scope s = Scope::new_root();
    PartitionedVariable table = numbered_table(s, 3);
    Output rows = embedding_lookup(s, table, ops::Const(s, Tensor::from_vector<int64_t>({2, bad})));
    Operation init = global_variables_initializer(s);
    Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);
    value_or_throw(run_graph(s, {}, {}, {init}, &device));
    auto result = run_graph(s, {rows}, {}, {}, &device);
    BOOST_TEST_CONTEXT("id " << bad) {
      BOOST_TEST(!result.ok());
      BOOST_TEST(result.status().code() == Code::kInvalidArgument, result.status().to_string());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
