// Tests for Switch, Merge and the executor's dead values: a conditional built from them takes
// one branch, the other branch's nodes (and what hangs on them by control edges) never run, and
// fetching a value of the untaken branch is an error naming the fetch.
#include <cmath>

#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;

namespace {

// cond(pred, x * 10 and counter += 1, x + 1 and counter += 100): the value, and the
// counter's increments as targets that run only in their branch.
struct Conditional {
  Scope s = Scope::new_root();
  Output pred = ops::Placeholder(s.with_op_name("pred"), DataType::kBool, PartialShape({}));
  Output x = ops::Const(s, 2.f);
  Output counter = ops::Variable(s.with_op_name("counter"), PartialShape({}), DataType::kInt32);
  Operation init = ops::Assign(s, counter, 0).op();
  Output result, true_value;
  Operation merged_effects;

  Conditional() {
    auto [pf, pt] = ops::Switch(s, pred, pred);
    Output pivot_t = ops::Identity(s.with_op_name("pivot_t"), pt);
    Output pivot_f = ops::Identity(s.with_op_name("pivot_f"), pf);
    Scope in_true = s.with_control_dependencies({pivot_t.op()});
    Scope in_false = s.with_control_dependencies({pivot_f.op()});
    true_value = ops::Mul(in_true.with_op_name("times_ten"), x, 10.f);
    Output false_value = ops::Add(in_false, x, 1.f);
    Output bump_t = ops::AssignAdd(in_true, counter, 1);
    Output bump_f = ops::AssignAdd(in_false, counter, 100);
    result =
        ops::Merge(s, {ops::Identity(in_true, true_value), ops::Identity(in_false, false_value)})
            .output;
    merged_effects =
        ops::Merge(s, {ops::Identity(in_true, bump_t), ops::Identity(in_false, bump_f)})
            .output.op();
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(control_flow_kernels)

BOOST_AUTO_TEST_CASE(a_conditional_runs_only_the_taken_branch) {
  Conditional c;
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);
  value_or_throw(run_graph(c.s, {}, {}, {c.init}, &device));
  auto taken = value_or_throw(
      run_graph(c.s, {c.result}, {{c.pred, Tensor(true)}}, {c.merged_effects}, &device));
  check_tensor<float>(taken[0], TensorShape{}, {20.f});
  auto other = value_or_throw(
      run_graph(c.s, {c.result}, {{c.pred, Tensor(false)}}, {c.merged_effects}, &device));
  check_tensor<float>(other[0], TensorShape{}, {3.f});
  // One increment from each step's branch: 1 + 100.
  check_tensor<int32_t>(value_or_throw(run_graph(c.s, {c.counter}, {}, {}, &device))[0],
                        TensorShape{}, {101});
}

BOOST_AUTO_TEST_CASE(fetching_the_untaken_branch_is_an_error_naming_it) {
  Conditional c;
  check_error(run_graph(c.s, {c.true_value}, {{c.pred, Tensor(false)}}).status(),
              Code::kInvalidArgument, "cond that was not taken");
  auto value = value_or_throw(run_graph(c.s, {c.true_value}, {{c.pred, Tensor(true)}}));
  check_tensor<float>(value[0], TensorShape{}, {20.f});
}

BOOST_AUTO_TEST_CASE(assert_and_check_numerics_fail_with_tensorflows_messages) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s.with_op_name("x"), DataType::kFloat, PartialShape({-1}));
  auto positive = ops::Greater(s, ops::Min(s, x, Tensor::from_vector<int32_t>({0})), 0.f);
  auto check = ops::Assert(s.with_op_name("check"), positive,
                           {Input(std::string("x must be positive:")), x}, 2);
  auto numerics = ops::CheckNumerics(s.with_op_name("numerics"), x, "x");
  BOOST_REQUIRE(s.ok());
  const Tensor good = Tensor::from_vector<float>({1.f, 2.f});
  BOOST_TEST(run_graph(s, {numerics}, {{x, good}}, {check}).ok());
  check_error(
      run_graph(s, {}, {{x, Tensor::from_vector<float>({1.f, -2.f, 3.f})}}, {check}).status(),
      Code::kInvalidArgument,
      "node 'check' (Assert): assertion failed: [x must be positive:] [[1, -2, ...]]");
  check_error(run_graph(s, {numerics}, {{x, Tensor::from_vector<float>({NAN, 1.f})}}).status(),
              Code::kInvalidArgument, "x : Tensor had NaN values");
  check_error(run_graph(s, {numerics}, {{x, Tensor::from_vector<float>({NAN, INFINITY})}}).status(),
              Code::kInvalidArgument, "x : Tensor had NaN and Inf values");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
