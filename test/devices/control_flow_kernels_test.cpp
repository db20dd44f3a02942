// Tests for Switch, Merge and the executor's dead values: a conditional built from them takes
// one branch, the other branch's nodes (and what hangs on them by control edges) never run, and
// fetching a value of the untaken branch is an error naming the fetch.
#include <cmath>

#include "devices/run_graph.hpp"
#include "function_graphs.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/graph_def_codec.hpp"
#include "troupe/graph/node_builder.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::function_arg;
using testing::function_result;
using testing::run_graph;
using testing::serialized;

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

// While(i, x; limit): cond i < limit (limit captured by cond), body (i + 1, x * factor)
// (factor captured by the body); `record` asks for the stacked loop variables.
Operation counting_loop(const Scope& s, Output limit, Output factor, bool record,
                        const std::string& cond_bytes = "") {
  Scope cond = Scope::new_root();
  function_arg(cond, "x", 1, DataType::kFloat);  // unused, but every argument has an _Arg
  function_result(cond,
                  ops::Less(cond, function_arg(cond, "i", 0, DataType::kInt32),
                            function_arg(cond, "limit", 2, DataType::kInt32)),
                  0, DataType::kBool);
  Scope body = Scope::new_root();
  function_result(body, ops::Add(body, function_arg(body, "i", 0, DataType::kInt32), 1), 0,
                  DataType::kInt32);
  function_result(body,
                  ops::Mul(body, function_arg(body, "x", 1, DataType::kFloat),
                           function_arg(body, "factor", 2, DataType::kFloat)),
                  1, DataType::kFloat);
  std::vector<DataType> types = {DataType::kInt32, DataType::kFloat};
  return NodeBuilder(s.with_op_name("loop"), "While")
      .input_list({Input(ops::Const(s, 0)), Input(ops::Const(s, 1.5f))})
      .input_list({Input(limit)})
      .input_list({Input(factor)})
      .attr("T", types)
      .attr("Tcond", std::vector<DataType>{DataType::kInt32})
      .attr("Tbody", std::vector<DataType>{DataType::kFloat})
      .attr("Tstacked", record ? types : std::vector<DataType>{})
      .attr("cond", cond_bytes.empty() ? serialized(cond) : cond_bytes)
      .attr("body", serialized(body))
      .finalize();
}

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

// The While kernel runs cond and body as functions until cond is false; with Tstacked it
// also gives every iteration's loop variables, stacked, for the gradient.
BOOST_AUTO_TEST_CASE(while_runs_its_body_until_its_condition_fails) {
  Scope s = Scope::new_root();
  Output limit = ops::Placeholder(s.with_op_name("limit"), DataType::kInt32, PartialShape({}));
  Operation loop = counting_loop(s, limit, ops::Const(s, 2.f), /*record=*/true);
  auto result = run_graph(
      s, {Output(loop, 0), Output(loop, 1), Output(loop, 2), Output(loop, 3), Output(loop, 4)},
      {{limit, Tensor::scalar<int32_t>(3)}});
  BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
  BOOST_TEST(result->at(0).scalar<int32_t>() == 3);
  BOOST_TEST(result->at(1).scalar<float>() == 12.f);
  check_tensor<int32_t>(result->at(2), {3}, {0, 1, 2});
  check_tensor<float>(result->at(3), {3}, {1.5f, 3.f, 6.f});
  BOOST_TEST(result->at(4).scalar<int32_t>() == 3);

  // No iteration: the inputs come out, and nothing is stacked.
  result = run_graph(s, {Output(loop, 1), Output(loop, 3)}, {{limit, Tensor::scalar<int32_t>(0)}});
  BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
  BOOST_TEST(result->at(0).scalar<float>() == 1.5f);
  check_tensor<float>(result->at(1), {0}, {});
}

// A body that records draws (Tdrawn) for the gradient gets its iteration's number with
// body_takes_iteration; the draws of every iteration are concatenated, with the number of
// elements and the shape of each (zeros in an iteration whose branch drew nothing).
BOOST_AUTO_TEST_CASE(while_records_the_draws_of_its_body_and_their_shapes) {
  Scope s = Scope::new_root();
  Scope cond = Scope::new_root();
  function_arg(cond, "x", 1, DataType::kFloat);
  function_result(cond, ops::Less(cond, function_arg(cond, "i", 0, DataType::kInt32), 3), 0,
                  DataType::kBool);
  Scope body = Scope::new_root();
  Output i = function_arg(body, "i", 0, DataType::kInt32);
  Output x = function_arg(body, "x", 1, DataType::kFloat);
  Output iteration = function_arg(body, "iteration", 2, DataType::kInt32);
  function_result(body, ops::Add(body, i, 1), 0, DataType::kInt32);
  function_result(body, ops::Add(body, x, 1.f), 1, DataType::kFloat);
  // The "draw": iteration + 1 copies of x * 10, in the branch taken in even iterations only.
  auto even = ops::Equal(body, ops::FloorMod(body, iteration, 2), 0);
  auto [odd_x, even_x] = ops::Switch(body, x, even);
  auto copies = ops::Fill(body, ops::Reshape(body, ops::Add(body, iteration, 1), {1}),
                          ops::Mul(body, even_x, 10.f));
  function_result(body, copies, 2, DataType::kFloat, /*allow_dead=*/true);
  Operation loop = NodeBuilder(s.with_op_name("loop"), "While")
                       .input_list({Input(ops::Const(s, 0)), Input(ops::Const(s, 0.5f))})
                       .input_list({})
                       .input_list({})
                       .attr("T", std::vector<DataType>{DataType::kInt32, DataType::kFloat})
                       .attr("Tdrawn", std::vector<DataType>{DataType::kFloat})
                       .attr("Ndrawn", 1)
                       .attr("drawn_from", std::vector<std::string>{"draw"})
                       .attr("body_takes_iteration", true)
                       .attr("cond", serialized(cond))
                       .attr("body", serialized(body))
                       .finalize();
  auto result = run_graph(s, {Output(loop, 1), Output(loop, 2), Output(loop, 3), Output(loop, 4)});
  BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
  BOOST_TEST(result->at(0).scalar<float>() == 3.5f);
  check_tensor<float>(result->at(1), {4}, {5.f, 25.f, 25.f, 25.f});
  check_tensor<int64_t>(result->at(2), {3, 2}, {1, 1, 0, 0, 3, 3});
  BOOST_TEST(result->at(3).scalar<int32_t>() == 3);
}

BOOST_AUTO_TEST_CASE(a_bad_condition_or_function_fails_naming_the_node) {
  Scope s = Scope::new_root();
  // A condition that returns an int32.
  Scope cond = Scope::new_root();
  function_arg(cond, "x", 1, DataType::kFloat);
  function_arg(cond, "limit", 2, DataType::kInt32);
  function_result(cond, function_arg(cond, "i", 0, DataType::kInt32), 0, DataType::kInt32);
  Operation loop = counting_loop(s, ops::Const(s, 3), ops::Const(s, 2.f), false, serialized(cond));
  check_error(run_graph(s, {Output(loop, 0)}).status(), Code::kInvalidArgument,
              "node 'loop' (While): cond must return one scalar bool, got 1 values (the first "
              "int32 of shape [])");
  Scope t = Scope::new_root();
  Operation broken = counting_loop(t, ops::Const(t, 3), ops::Const(t, 2.f), false, "not a graph");
  check_error(run_graph(t, {Output(broken, 0)}).status(), Code::kInvalidArgument,
              "node 'loop' (While): function cond");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
