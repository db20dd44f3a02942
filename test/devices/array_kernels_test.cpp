// Tests for the array and state kernels and the executor: hand-computed values and errors.
#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

BOOST_AUTO_TEST_SUITE(array_kernels)

BOOST_AUTO_TEST_CASE(const_and_identity_share_the_buffer) {
  Scope s = Scope::new_root();
  Tensor value = Tensor::from_vector<float>({1, 2, 3});
  auto c = ops::Const(s, value);
  auto id = ops::Identity(s, c);
  Tensor out = run_one(s, id);
  check_tensor<float>(out, TensorShape{3}, {1, 2, 3});
  BOOST_TEST(out.shares_buffer_with(value));
}

BOOST_AUTO_TEST_CASE(string_constant) {
  Scope s = Scope::new_root();
  Tensor out = run_one(s, ops::Const(s, "Hello, distributed troupe!"));
  BOOST_TEST(out.scalar<std::string>() == "Hello, distributed troupe!");
}

BOOST_AUTO_TEST_CASE(placeholder_fed_and_unfed) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kFloat, PartialShape({-1, 2}));
  auto y = ops::Identity(s, x);
  check_tensor<float>(
      run_one(s, y, {{x, value_or_throw(Tensor::from_vector<float>({1, 2}, {1, 2}))}}),
      TensorShape{1, 2}, {1, 2});
  auto unfed = run_graph(s, {y});
  check_error(unfed.status(), Code::kInvalidArgument, "must feed a value for placeholder");
  check_error(unfed.status(), Code::kInvalidArgument, "[?,2]");
}

BOOST_AUTO_TEST_CASE(feeding_an_intermediate_skips_its_producer) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kFloat);
  auto y = ops::Neg(s, x);
  auto z = ops::Add(s, y, 1.f);
  // x is not fed, but y is: x never runs.
  check_tensor<float>(run_one(s, z, {{y, Tensor(5.f)}}), TensorShape{}, {6});
}

BOOST_AUTO_TEST_CASE(reshape_infers_minus_one) {
  Scope s = Scope::new_root();
  auto c = ops::Const(s, Tensor::from_vector<int32_t>({1, 2, 3, 4, 5, 6}));
  auto r = ops::Reshape(s, c, {3, -1});
  BOOST_TEST(r.shape().to_string() == "[3,2]");
  check_tensor<int32_t>(run_one(s, r), TensorShape{3, 2}, {1, 2, 3, 4, 5, 6});
}

BOOST_AUTO_TEST_CASE(reshape_count_mismatch_is_caught_before_running) {
  Scope s = Scope::new_root();
  auto c = ops::Const(s, Tensor::from_vector<int32_t>({1, 2, 3, 4, 5, 6}));
  ops::Reshape(s.with_op_name("bad_reshape"), c, {4, 2});
  check_error(s.status(), Code::kInvalidArgument, "bad_reshape");
}

BOOST_AUTO_TEST_CASE(reshape_count_mismatch_at_run_time) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kFloat);
  auto r = ops::Reshape(s, x, {4});
  auto result = run_graph(s, {r}, {{x, Tensor::from_vector<float>({1, 2, 3})}});
  check_error(result.status(), Code::kInvalidArgument, "Reshape");
}

BOOST_AUTO_TEST_CASE(shape_and_fill) {
  Scope s = Scope::new_root();
  auto c = ops::Const(s, value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3})));
  check_tensor<int32_t>(run_one(s, ops::Shape(s, c)), TensorShape{2}, {2, 3});
  check_tensor<int64_t>(run_one(s, ops::Shape(s, c, DataType::kInt64)), TensorShape{2}, {2, 3});
  check_tensor<float>(run_one(s, ops::Fill(s, {2, 2}, 7.f)), TensorShape{2, 2}, {7, 7, 7, 7});
}

BOOST_AUTO_TEST_CASE(variable_assign_and_update) {
  Scope s = Scope::new_root();
  auto v = ops::Variable(s.with_op_name("v"), TensorShape{2}, DataType::kFloat);
  auto init = ops::Assign(s, v, Tensor::from_vector<float>({1, 2}));
  auto add = ops::AssignAdd(s, v, Tensor::from_vector<float>({10, 20}));
  auto sub = ops::AssignSub(s, v, Tensor::from_vector<float>({1, 1}));
  auto read = ops::Identity(s, v);
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);

  auto before = run_graph(s, {read}, {}, {}, &device);
  check_error(before.status(), Code::kFailedPrecondition, "uninitialized value 'v'");

  BOOST_REQUIRE(run_graph(s, {}, {}, {init.op()}, &device).ok());
  auto after_add = run_graph(s, {add}, {}, {}, &device);
  BOOST_REQUIRE(after_add.ok());
  check_tensor<float>(after_add->at(0), TensorShape{2}, {11, 22});
  auto after_sub = run_graph(s, {sub}, {}, {}, &device);
  BOOST_REQUIRE(after_sub.ok());
  check_tensor<float>(after_sub->at(0), TensorShape{2}, {10, 21});
}

BOOST_AUTO_TEST_CASE(a_read_is_a_snapshot_that_later_updates_do_not_change) {
  Scope s = Scope::new_root();
  auto v = ops::Variable(s, TensorShape{1}, DataType::kFloat);
  auto init = ops::Assign(s, v, Tensor::from_vector<float>({1}));
  auto read = ops::Identity(s, v);
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);
  BOOST_REQUIRE(run_graph(s, {}, {}, {init.op()}, &device).ok());
  auto snapshot = run_graph(s, {read}, {}, {}, &device);
  BOOST_REQUIRE(snapshot.ok());
  auto add = ops::AssignAdd(s, v, Tensor::from_vector<float>({5}));
  BOOST_REQUIRE(run_graph(s, {}, {}, {add.op()}, &device).ok());
  check_tensor<float>(snapshot->at(0), TensorShape{1}, {1});
  check_tensor<float>(run_graph(s, {read}, {}, {}, &device)->at(0), TensorShape{1}, {6});
}

BOOST_AUTO_TEST_CASE(assign_checks_the_shape) {
  Scope s = Scope::new_root();
  auto v = ops::Variable(s, PartialShape({-1}), DataType::kFloat);
  auto x = ops::Placeholder(s, DataType::kFloat);
  auto assign = ops::Assign(s, v, x);
  auto bad =
      run_graph(s, {assign}, {{x, value_or_throw(Tensor::from_vector<float>({1, 2}, {1, 2}))}});
  check_error(bad.status(), Code::kInvalidArgument, "does not fit variable");
}

BOOST_AUTO_TEST_CASE(control_dependencies_order_execution) {
  Scope s = Scope::new_root();
  auto v = ops::Variable(s, TensorShape{}, DataType::kInt32);
  auto init = ops::Assign(s, v, 1);
  auto bump = ops::AssignAdd(s.with_control_dependencies({init.op()}), v, 41);
  auto read = ops::Identity(s.with_control_dependencies({bump.op()}), v);
  check_tensor<int32_t>(run_one(s, read), TensorShape{}, {42});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
