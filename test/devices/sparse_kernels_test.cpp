// Tests of the sparse path: Unique, the Scatter updates, the SparseApply updates (each against
// the dense update on the rows it touches), GatherV2's IndexedSlices gradient (through Identity,
// aggregated over several gathers, densified next to a dense gradient) and the optimizers'
// sparse updates (GradientDescent, Adagrad, Adam and LazyAdam) against the dense ones.
#include <cmath>
#include <random>

#include "devices/run_graph.hpp"
#include "troupe/graph/gradients.hpp"
#include "troupe/graph/optimizers.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;

namespace {

struct Fixture {
  Device device{"/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 2};
  Scope s = Scope::new_root();

  // A [rows, cols] float64 variable holding `values`.
  Output variable(const std::string& name, int64_t rows, int64_t cols,
                  const std::vector<double>& values) {
    auto v = ops::Variable(s.with_op_name(name), TensorShape{rows, cols}, DataType::kDouble);
    Tensor t(DataType::kDouble, TensorShape{rows, cols});
    std::copy(values.begin(), values.end(), t.data<double>());
    BOOST_REQUIRE(run_graph(s, {}, {}, {ops::Assign(s, v, t).op()}, &device).ok());
    return v;
  }
  std::vector<Tensor> run(const std::vector<Output>& outs,
                          const std::vector<Operation>& targets = {}) {
    auto result = run_graph(s, outs, {}, targets, &device);
    BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
    return *result;
  }
  Tensor run(const Output& out) { return run(std::vector<Output>{out}).at(0); }
  Status run_status(const Output& out) { return run_graph(s, {out}, {}, {}, &device).status(); }
};

std::vector<double> iota(int n, double start = 1, double step = 1) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i)
    v.push_back(start + step * i);
  return v;
}

Tensor matrix(int64_t rows, int64_t cols, const std::vector<double>& values) {
  Tensor t(DataType::kDouble, TensorShape{rows, cols});
  std::copy(values.begin(), values.end(), t.data<double>());
  return t;
}

std::vector<double> values_of(const Tensor& t) {
  auto flat = t.flat<double>();
  return {flat.begin(), flat.end()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sparse_kernels)

BOOST_AUTO_TEST_CASE(unique_keeps_first_occurrence_order) {
  Fixture f;
  auto u = ops::Unique(f.s, Tensor::from_vector<int64_t>({7, 3, 7, 9, 3, 3}));
  auto out = f.run({u.y, u.idx});
  check_tensor<int64_t>(out[0], TensorShape{3}, {7, 3, 9});
  check_tensor<int32_t>(out[1], TensorShape{6}, {0, 1, 0, 2, 1, 1});
  auto wide = ops::Unique(f.s, Tensor::from_vector<int32_t>({}), DataType::kInt64);
  auto empty = f.run({wide.y, wide.idx});
  check_tensor<int32_t>(empty[0], TensorShape{0}, {});
  check_tensor<int64_t>(empty[1], TensorShape{0}, {});
}

BOOST_AUTO_TEST_CASE(dynamic_partition_and_stitch_round_trip) {
  Fixture f;
  const Tensor data = matrix(5, 2, iota(10));
  const Tensor partitions = Tensor::from_vector<int32_t>({2, 0, 2, 1, 0});
  auto parts = ops::DynamicPartition(f.s, data, partitions, 3);
  auto positions =
      ops::DynamicPartition(f.s, Tensor::from_vector<int32_t>({0, 1, 2, 3, 4}), partitions, 3);
  auto merged = ops::DynamicStitch(f.s, {positions[0], positions[1], positions[2]},
                                   {parts[0], parts[1], parts[2]});
  auto out = f.run({parts[0], parts[1], parts[2], merged});
  check_tensor<double>(out[0], TensorShape{2, 2}, {3, 4, 9, 10});
  check_tensor<double>(out[1], TensorShape{1, 2}, {7, 8});
  check_tensor<double>(out[2], TensorShape{2, 2}, {1, 2, 5, 6});
  check_tensor<double>(out[3], TensorShape{5, 2}, iota(10));
  // Rows no index names are zero; a later index wins.
  auto gaps = ops::DynamicStitch(
      f.s, {Tensor::from_vector<int32_t>({3, 0}), Tensor::from_vector<int32_t>({0})},
      {Tensor::from_vector<int64_t>({7, 8}), Tensor::from_vector<int64_t>({9})});
  check_tensor<int64_t>(f.run(gaps), TensorShape{4}, {9, 0, 0, 7});
  auto bad = ops::DynamicPartition(f.s.with_op_name("bad_partition"), data,
                                   Tensor::from_vector<int32_t>({0, 1, 3, 0, 0}), 3);
  check_error(f.run_status(bad[0]), Code::kInvalidArgument,
              "'bad_partition' (DynamicPartition): partitions[2] = 3 is not in [0, 3)");
  // Shapes known only when running: data of lower rank than its indices.
  auto unknown_indices = ops::Placeholder(f.s, DataType::kInt32);
  auto unknown_data = ops::Placeholder(f.s, DataType::kDouble);
  auto mismatched = ops::DynamicStitch(f.s, {unknown_indices}, {unknown_data});
  check_error(
      run_graph(f.s, {mismatched},
                {{unknown_indices,
                  Tensor::from_vector<int32_t>({0, 1, 2, 3}).reshaped(TensorShape{2, 2}).value()},
                 {unknown_data, Tensor::from_vector<double>({1, 2, 3, 4})}},
                {}, &f.device)
          .status(),
      Code::kInvalidArgument, "must be a prefix of data[0]'s shape");
  auto negative = ops::DynamicStitch(f.s, {Tensor::from_vector<int32_t>({-2})},
                                     {Tensor::from_vector<double>({1})});
  check_error(f.run_status(negative), Code::kInvalidArgument, "indices[0][0] = -2 is negative");
}

BOOST_AUTO_TEST_CASE(scatter_ops_apply_every_index_in_order) {
  // table rows [1 2], [3 4], [5 6]; updates at rows 2, 0, 2.
  const Tensor ids = Tensor::from_vector<int32_t>({2, 0, 2});
  const Tensor updates = matrix(3, 2, {10, 20, 30, 40, 50, 60});
  struct Case {
    const char* op;
    std::vector<double> expected;
  };
  for (const Case& c : std::vector<Case>{
           {"Update", {30, 40, 3, 4, 50, 60}},  // the last update of row 2 wins
           {"Add", {31, 42, 3, 4, 65, 86}},     // duplicates sum
           {"Sub", {-29, -38, 3, 4, -55, -74}},
           {"Mul", {30, 80, 3, 4, 2500, 7200}},
           {"Div", {1.0 / 30, 2.0 / 40, 3, 4, 5.0 / 10 / 50, 6.0 / 20 / 60}},
           {"Min", {1, 2, 3, 4, 5, 6}},
           {"Max", {30, 40, 3, 4, 50, 60}},
       }) {
    Fixture f;
    auto table = f.variable("table", 3, 2, iota(6));
    auto out = ops::Scatter(f.s, c.op, table, ids, updates);
    check_tensor<double>(f.run(out), TensorShape{3, 2}, c.expected, 1e-12);
  }
}

BOOST_AUTO_TEST_CASE(scatter_of_a_scalar_and_integer_division_edge_cases) {
  Fixture f;
  auto table = f.variable("table", 3, 2, iota(6));
  check_tensor<double>(
      f.run(ops::ScatterUpdate(f.s, table, Tensor::from_vector<int32_t>({2, 0}), 0.5)),
      TensorShape{3, 2}, {0.5, 0.5, 3, 4, 0.5, 0.5});
  auto ints = ops::Variable(f.s.with_op_name("ints"), TensorShape{2}, DataType::kInt32);
  auto fill = ops::Assign(f.s, ints, Tensor::from_vector<int32_t>({INT32_MIN, 7}));
  BOOST_REQUIRE(run_graph(f.s, {}, {}, {fill.op()}, &f.device).ok());
  // The lowest int divided by -1 wraps (no trap); by 0 is InvalidArgument.
  check_tensor<int32_t>(f.run(ops::Scatter(f.s, "Div", ints, Tensor::from_vector<int32_t>({0, 1}),
                                           Tensor::from_vector<int32_t>({-1, -1}))),
                        TensorShape{2}, {INT32_MIN, -7});
  check_error(f.run_status(ops::Scatter(f.s, "Div", ints, Tensor::from_vector<int32_t>({1}),
                                        Tensor::from_vector<int32_t>({0}))),
              Code::kInvalidArgument, "integer division by zero");
}

BOOST_AUTO_TEST_CASE(scatter_rejects_bad_indices_and_shapes_before_writing) {
  Fixture f;
  auto table = f.variable("table", 3, 2, iota(6));
  auto bad = ops::ScatterAdd(f.s.with_op_name("bad_scatter"), table,
                             Tensor::from_vector<int64_t>({1, 3}), matrix(2, 2, iota(4)));
  check_error(f.run_status(bad), Code::kInvalidArgument, "bad_scatter");
  check_error(f.run_status(bad), Code::kInvalidArgument, "indices[1] = 3 is not in [0, 3)");
  auto negative =
      ops::ScatterUpdate(f.s, table, Tensor::from_vector<int32_t>({-1}), matrix(1, 2, {0, 0}));
  check_error(f.run_status(negative), Code::kInvalidArgument, "indices[0] = -1");
  check_tensor<double>(f.run(ops::Identity(f.s, table)), TensorShape{3, 2}, iota(6));
  auto empty = ops::ScatterAdd(f.s, table, Tensor::from_vector<int32_t>({}),
                               Tensor(DataType::kDouble, TensorShape{0, 2}));
  check_tensor<double>(f.run(empty), TensorShape{3, 2}, iota(6));
  // updates of the wrong shape: caught by shape inference when building.
  Scope s = Scope::new_root();
  auto v = ops::Variable(s, TensorShape{3, 2}, DataType::kDouble);
  ops::ScatterAdd(s, v, Tensor::from_vector<int32_t>({0}), matrix(1, 3, {1, 2, 3}));
  check_error(s.status(), Code::kInvalidArgument, "expected indices.shape + ref.shape[1:]");
}

// Each SparseApply op, on distinct rows, must give the dense Apply op's result on those rows
// (fed the same gradient there, zeros elsewhere) and leave the other rows alone.
BOOST_AUTO_TEST_CASE(sparse_apply_matches_dense_apply_on_touched_rows) {
  struct Case {
    const char* kind;
    int slots;
    std::vector<double> scalars;  // in input order after the gradient's position
    int grad_at;                  // position of the gradient among the inputs
    std::optional<bool> nesterov;
  };
  const std::vector<Case> cases = {
      {"Momentum", 1, {0.1, 0.9}, 3, true},
      {"Adagrad", 1, {0.5}, 3, {}},
      {"Adam", 2, {0.9, 0.999, 0.01, 0.9, 0.999, 1e-8}, 9, false},
      {"RMSProp", 2, {0.01, 0.9, 0.5, 1e-6}, 7, {}},
      {"CenteredRMSProp", 3, {0.01, 0.9, 0.5, 1e-6}, 8, {}},
      {"Adadelta", 2, {1.0, 0.95, 1e-6}, 6, {}},
      {"FtrlV2", 2, {0.1, 0.01, 0.02, 0.03, -0.5}, 3, {}},
      {"ProximalGradientDescent", 0, {0.1, 0.01, 0.02}, 4, {}},
      {"ProximalAdagrad", 1, {0.1, 0.01, 0.02}, 5, {}},
  };
  const int rows = 4, cols = 3;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(0.1, 1.0);
  auto random = [&](int n) {
    std::vector<double> v(n);
    for (double& x : v)
      x = dist(rng);
    return v;
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.kind) {
      const std::vector<double> grad_rows = random(2 * cols);
      std::vector<double> dense_grad(rows * cols, 0.0);
      const std::vector<int64_t> touched = {3, 1};
      for (int k = 0; k < 2; ++k)
        for (int j = 0; j < cols; ++j)
          dense_grad[touched[k] * cols + j] = grad_rows[k * cols + j];
      std::vector<std::vector<double>> start;
      for (int i = 0; i <= c.slots; ++i)
        start.push_back(random(rows * cols));
      // CenteredRMSProp needs ms > mg^2 (slot 1 is mg, slot 2 ms).
      if (std::string_view(c.kind) == "CenteredRMSProp") {
        for (double& x : start[1])
          x *= 0.1;
      }
      std::vector<std::vector<double>> results[2];
      for (int sparse = 0; sparse < 2; ++sparse) {
        Fixture f;
        std::vector<Output> refs;
        for (int i = 0; i <= c.slots; ++i)
          refs.push_back(f.variable("v" + std::to_string(i), rows, cols, start[i]));
        std::vector<Input> inputs(refs.begin(), refs.end());
        size_t scalar = 0;
        for (int i = c.slots + 1; i < c.grad_at; ++i)
          inputs.emplace_back(c.scalars[scalar++]);
        inputs.emplace_back(sparse ? matrix(2, cols, grad_rows) : matrix(rows, cols, dense_grad));
        while (scalar < c.scalars.size())
          inputs.emplace_back(c.scalars[scalar++]);
        const Output indices = sparse ? ops::Const(f.s, Tensor::from_vector(touched)) : Output();
        auto update = ops::ApplyUpdate(f.s, c.kind, inputs, indices, c.nesterov);
        BOOST_REQUIRE_MESSAGE(f.s.status().ok(), f.s.status().to_string());
        f.run({}, {update.op()});
        std::vector<Output> reads;
        for (const Output& r : refs)
          reads.push_back(ops::Identity(f.s, r));
        for (const Tensor& t : f.run(reads))
          results[sparse].push_back(values_of(t));
      }
      for (int i = 0; i <= c.slots; ++i) {
        for (int r = 0; r < rows; ++r) {
          const bool is_touched = r == 1 || r == 3;
          for (int j = 0; j < cols; ++j) {
            const int e = r * cols + j;
            const double want = is_touched ? results[0][i][e] : start[i][e];
            BOOST_TEST(
                std::abs(results[1][i][e] - want) <= 1e-12,
                "ref " << i << " element " << e << ": " << results[1][i][e] << " vs " << want);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(sparse_apply_checks_its_indices_and_gradient) {
  Fixture f;
  auto var = f.variable("w", 3, 2, iota(6));
  auto accum = f.variable("a", 3, 2, std::vector<double>(6, 0.1));
  auto bad = ops::ApplyUpdate(f.s.with_op_name("bad_update"), "Adagrad",
                              {var, accum, 0.5, matrix(2, 2, iota(4))},
                              ops::Const(f.s, Tensor::from_vector<int32_t>({0, 5})));
  check_error(f.run_status(bad), Code::kInvalidArgument, "bad_update");
  check_error(f.run_status(bad), Code::kInvalidArgument, "indices[1] = 5 is not in [0, 3)");
  check_tensor<double>(f.run(ops::Identity(f.s, var)), TensorShape{3, 2}, iota(6));
  // Duplicates apply one after the other: two steps of Adagrad on row 0.
  auto twice = ops::ApplyUpdate(f.s, "Adagrad", {var, accum, 0.5, matrix(2, 2, {1, 1, 1, 1})},
                                ops::Const(f.s, Tensor::from_vector<int32_t>({0, 0})));
  const double after_one = 1 - 0.5 / std::sqrt(1.1);
  const double after_two = after_one - 0.5 / std::sqrt(2.1);
  check_tensor<double>(f.run(twice), TensorShape{3, 2},
                       {after_two, 2 - 0.5 / std::sqrt(1.1) - 0.5 / std::sqrt(2.1), 3, 4, 5, 6},
                       1e-12);
  Scope s = Scope::new_root();
  ops::ApplyUpdate(s, "GradientDescent", {Output(), 0.1, 0.1}, ops::Const(s, int32_t{0}));
  check_error(s.status(), Code::kInvalidArgument, "no sparse update 'GradientDescent'");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(sparse_gradients)

BOOST_AUTO_TEST_CASE(gather_gives_indexed_slices_through_identity_and_concatenates) {
  Fixture f;
  auto table = f.variable("table", 4, 2, iota(8));
  auto read = ops::Identity(f.s, table);
  auto a = ops::GatherV2(f.s, read, Tensor::from_vector<int32_t>({3, 1, 3}), int32_t{0});
  auto b = ops::GatherV2(f.s, table, Tensor::from_vector<int32_t>({0}), int32_t{0});
  auto loss = ops::Add(f.s, ops::Sum(f.s, ops::Mul(f.s, a, 2.0), {int32_t{0}, int32_t{1}}),
                       ops::Sum(f.s, ops::Mul(f.s, b, 5.0), {int32_t{0}, int32_t{1}}));
  auto grads = add_gradients_or_slices(f.s, {loss}, {table});
  BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
  const Gradient& g = grads->at(0);
  BOOST_TEST_REQUIRE(g.is_sparse());
  auto parts = f.run({g.slices().values, g.slices().indices, g.slices().dense_shape});
  // The two gathers' rows, concatenated (in either order), and the table's shape.
  BOOST_TEST(parts[0].shape().to_string() == "[4,2]");
  check_tensor<int32_t>(parts[2], TensorShape{2}, {4, 2});
  auto dense = add_gradients(f.s, {loss}, {table});
  BOOST_REQUIRE(dense.ok());
  check_tensor<double>(f.run(dense->at(0)), TensorShape{4, 2}, {5, 5, 2, 2, 0, 0, 4, 4});
}

BOOST_AUTO_TEST_CASE(a_dense_use_densifies_the_sum) {
  Fixture f;
  auto table = f.variable("table", 3, 1, {1, 2, 3});
  auto rows = ops::GatherV2(f.s, table, Tensor::from_vector<int64_t>({2, 2}), int32_t{0});
  auto loss = ops::Add(f.s, ops::Sum(f.s, rows, {int32_t{0}, int32_t{1}}),
                       ops::Sum(f.s, ops::Square(f.s, table), {int32_t{0}, int32_t{1}}));
  auto grads = add_gradients_or_slices(f.s, {loss}, {table});
  BOOST_REQUIRE(grads.ok());
  BOOST_TEST(!grads->at(0).is_sparse());
  check_tensor<double>(f.run(grads->at(0).dense()), TensorShape{3, 1}, {2, 4, 8});
}

BOOST_AUTO_TEST_CASE(an_empty_id_list_gives_empty_slices) {
  Fixture f;
  auto table = f.variable("table", 3, 2, iota(6));
  auto rows = ops::GatherV2(f.s, table, Tensor::from_vector<int32_t>({}), int32_t{0});
  auto loss = ops::Sum(f.s, rows, {int32_t{0}, int32_t{1}});
  auto dense = add_gradients(f.s, {loss}, {table});
  BOOST_REQUIRE(dense.ok());
  check_tensor<double>(f.run(dense->at(0)), TensorShape{3, 2}, std::vector<double>(6, 0.0));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(sparse_optimizers)

namespace {

// loss = sum((gather(table, ids) * weights)^2) / 2, with duplicate ids; one training step of
// `optimizer`, sparse (minimize) or with the gradient densified first.
std::vector<double> one_step(Optimizer& optimizer, bool densify, int steps = 1) {
  Fixture f;
  auto table = make_variable(f.s, "table", matrix(5, 2, iota(10, 0.5, 0.25)));
  auto ids = Tensor::from_vector<int32_t>({4, 1, 4, 0});
  auto rows = ops::GatherV2(f.s, table.ref, ids, int32_t{0});
  auto weighted = ops::Mul(f.s, rows, matrix(4, 2, iota(8, -1, 0.3)));
  auto loss =
      ops::Mul(f.s, ops::Sum(f.s, ops::Square(f.s, weighted), {int32_t{0}, int32_t{1}}), 0.5);
  auto grads = optimizer.compute_gradients(f.s, loss, {table.ref});
  BOOST_REQUIRE(grads.ok());
  BOOST_TEST_REQUIRE(grads->at(0).gradient.is_sparse());
  if (densify) (*grads)[0].gradient = to_dense(f.s, grads->at(0).gradient);
  auto train = optimizer.apply_gradients(f.s, *grads);
  BOOST_REQUIRE_MESSAGE(train.ok(), train.status().to_string());
  f.run({}, {global_variables_initializer(f.s)});
  for (int i = 0; i < steps; ++i)
    f.run({}, {*train});
  return values_of(f.run(ops::Identity(f.s, table.ref)));
}

void check_close(const std::vector<double>& a, const std::vector<double>& b) {
  BOOST_TEST_REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i)
    BOOST_TEST(std::abs(a[i] - b[i]) <= 1e-12, "element " << i << ": " << a[i] << " vs " << b[i]);
}

}  // namespace

BOOST_AUTO_TEST_CASE(sparse_updates_equal_dense_ones) {
  {
    GradientDescentOptimizer sparse(0.1), dense(0.1);
    check_close(one_step(sparse, false, 3), one_step(dense, true, 3));
  }
  {
    AdagradOptimizer sparse(0.1), dense(0.1);
    check_close(one_step(sparse, false, 3), one_step(dense, true, 3));
  }
  {
    // TensorFlow's sparse Adam decays every row's moments: the dense update exactly.
    AdamOptimizer sparse(0.1), dense(0.1);
    check_close(one_step(sparse, false, 3), one_step(dense, true, 3));
  }
}

BOOST_AUTO_TEST_CASE(lazy_adam_updates_with_sparse_apply_adam) {
  // One step from fresh moments: lazy and eager agree (untouched rows have zero moments).
  AdamOptimizer lazy(0.1), eager(0.1);
  lazy.set_lazy(true);
  check_close(one_step(lazy, false, 1), one_step(eager, false, 1));
  // The lazy update is the SparseApplyAdam op, which leaves untouched rows (moments and all)
  // alone: sparse_apply_matches_dense_apply_on_touched_rows checks it.
  Fixture f;
  auto table = make_variable(f.s, "table", matrix(3, 1, {1, 2, 3}));
  auto loss =
      ops::Sum(f.s, ops::GatherV2(f.s, table.ref, Tensor::from_vector<int32_t>({1}), int32_t{0}),
               {int32_t{0}, int32_t{1}});
  AdamOptimizer optimizer(0.1);
  optimizer.set_lazy(true);
  BOOST_REQUIRE(optimizer.minimize(f.s, loss).ok());
  int sparse_updates = 0;
  for (int id = 0; id < f.s.graph().num_nodes(); ++id)
    sparse_updates += f.s.graph().node(id).op_name() == "SparseApplyAdam";
  BOOST_TEST(sparse_updates == 1);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
