// Tests for Pack, Where, Select, GatherV2 and LogicalNot: values along every axis, strings, shapes
// at build time, and the errors TensorFlow gives (mismatched shapes, indices out of range).
#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

BOOST_AUTO_TEST_SUITE(selection_kernels)

BOOST_AUTO_TEST_CASE(pack_along_each_axis) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, {{1, 2}, {3, 4}});
  auto b = ops::Const(s, {{5, 6}, {7, 8}});
  auto first = ops::Pack(s, {a, b}, 0);
  BOOST_TEST(first.shape().to_string() == "[2,2,2]");
  check_tensor<int32_t>(run_one(s, first), TensorShape{2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  check_tensor<int32_t>(run_one(s, ops::Pack(s, {a, b}, 1)), TensorShape{2, 2, 2},
                        {1, 2, 5, 6, 3, 4, 7, 8});
  check_tensor<int32_t>(run_one(s, ops::Pack(s, {a, b}, -1)), TensorShape{2, 2, 2},
                        {1, 5, 2, 6, 3, 7, 4, 8});
  check_tensor<std::string>(run_one(s, ops::Pack(s, {ops::Const(s, "x"), ops::Const(s, "y")})),
                            TensorShape{2}, {"x", "y"});
  ops::Pack(s.with_op_name("mismatch"), {a, ops::Const(s, {1, 2})});
  check_error(s.status(), Code::kInvalidArgument, "shapes of all inputs must match");
}

BOOST_AUTO_TEST_CASE(pack_checks_shapes_when_they_are_only_known_at_run_time) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kFloat);
  auto packed = ops::Pack(s.with_op_name("late"), {x, ops::Const(s, {1.f, 2.f})});
  check_error(run_graph(s, {packed}, {{x, Tensor::from_vector<float>({1.f})}}).status(),
              Code::kInvalidArgument, "node 'late' (Pack): shapes of all inputs must match");
}

BOOST_AUTO_TEST_CASE(where_gives_coordinates_in_row_major_order) {
  Scope s = Scope::new_root();
  auto flags = ops::Const(s, {{true, false, true}, {false, false, true}});
  auto where = ops::Where(s, flags);
  BOOST_TEST(where.shape().to_string() == "[?,2]");
  check_tensor<int64_t>(run_one(s, where), TensorShape{3, 2}, {0, 0, 0, 2, 1, 2});
  check_tensor<int64_t>(run_one(s, ops::Where(s, ops::Const(s, {false, false}))), TensorShape{0, 1},
                        {});
}

BOOST_AUTO_TEST_CASE(gather_along_each_axis_with_both_index_types) {
  Scope s = Scope::new_root();
  auto params = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto rows = ops::GatherV2(s, params, {1, 0, 1}, 0);
  BOOST_TEST(rows.shape().to_string() == "[3,3]");
  check_tensor<float>(run_one(s, rows), TensorShape{3, 3}, {4, 5, 6, 1, 2, 3, 4, 5, 6});
  auto columns = ops::GatherV2(s, params, Tensor::from_vector<int64_t>({2, 0}), int64_t{1});
  check_tensor<float>(run_one(s, columns), TensorShape{2, 2}, {3, 1, 6, 4});
  auto nested = ops::GatherV2(s, params, {{0}, {1}}, 0);
  BOOST_TEST(nested.shape().to_string() == "[2,1,3]");
  check_tensor<std::string>(
      run_one(s, ops::GatherV2(s, Tensor::from_vector<std::string>({"a", "b", "c"}), {2, 2}, 0)),
      TensorShape{2}, {"c", "c"});
}

BOOST_AUTO_TEST_CASE(gather_refuses_indices_out_of_range) {
  Scope s = Scope::new_root();
  auto params = ops::Const(s, {10, 20, 30});
  auto bad = ops::GatherV2(s.with_op_name("bad"), params, {0, 3}, 0);
  check_error(run_graph(s, {bad}).status(), Code::kInvalidArgument,
              "node 'bad' (GatherV2): indices[1] = 3 is not in [0, 3)");
  auto negative = ops::GatherV2(s, params, {-1}, 0);
  check_error(run_graph(s, {negative}).status(), Code::kInvalidArgument, "= -1 is not in");
  ops::GatherV2(s.with_op_name("axis"), params, {0}, 1);
  check_error(s.status(), Code::kInvalidArgument, "axis 1 is out of range");
}

BOOST_AUTO_TEST_CASE(logical_not) {
  Scope s = Scope::new_root();
  check_tensor<bool>(run_one(s, ops::LogicalNot(s, {true, false})), TensorShape{2}, {false, true});
}

BOOST_AUTO_TEST_CASE(select_by_element_by_row_and_by_scalar) {
  Scope s = Scope::new_root();
  auto t = ops::Const(s, {{1, 2}, {3, 4}});
  auto e = ops::Const(s, {{5, 6}, {7, 8}});
  auto same_shape =
      ops::Const(s, value_or_throw(Tensor::from_vector<bool>({true, false, false, true}, {2, 2})));
  check_tensor<int32_t>(run_one(s, ops::Select(s, same_shape, t, e)), TensorShape{2, 2},
                        {1, 6, 7, 4});
  check_tensor<int32_t>(run_one(s, ops::Select(s, Tensor::from_vector<bool>({false, true}), t, e)),
                        TensorShape{2, 2}, {5, 6, 3, 4});
  check_tensor<int32_t>(run_one(s, ops::Select(s, Tensor(true), t, e)), TensorShape{2, 2},
                        {1, 2, 3, 4});
  check_tensor<std::string>(run_one(s, ops::Select(s, Tensor::from_vector<bool>({true, false}),
                                                   Tensor::from_vector<std::string>({"a", "b"}),
                                                   Tensor::from_vector<std::string>({"c", "d"}))),
                            TensorShape{2}, {"a", "d"});
  ops::Select(s.with_op_name("bad_cond"), Tensor::from_vector<bool>({true, false, true}), t, e);
  check_error(s.status(), Code::kInvalidArgument, "node 'bad_cond' (Select)");
  Scope s2 = Scope::new_root();
  ops::Select(s2.with_op_name("bad_sides"), Tensor(true), ops::Const(s2, {1, 2}),
              ops::Const(s2, {1, 2, 3}));
  check_error(s2.status(), Code::kInvalidArgument, "t and e must have the same shape");
  // Shapes known only when running: the kernel checks them.
  Scope s3 = Scope::new_root();
  auto c = ops::Placeholder(s3, DataType::kBool);
  auto late =
      ops::Select(s3.with_op_name("late"), c, ops::Const(s3, {1, 2}), ops::Const(s3, {3, 4}));
  check_error(run_graph(s3, {late}, {{c, Tensor::from_vector<bool>({true, false, true})}}).status(),
              Code::kInvalidArgument, "node 'late' (Select): the condition must be");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
