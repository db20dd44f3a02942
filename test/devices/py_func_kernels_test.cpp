// Tests for the PyFunc kernel's bridge (devices/py_func.hpp) without Python: no handler is
// FailedPrecondition naming the node, a handler's results become the outputs, and a result of
// another dtype than Tout, or the handler's error, fails naming the node.
#include "devices/run_graph.hpp"
#include "troupe/devices/py_func.hpp"

namespace troupe {
using testing::check_error;
using testing::run_graph;

namespace {

struct NoHandlerAfter {
  ~NoHandlerAfter() { set_py_func_handler(nullptr); }
};

Output py_func(const Scope& s, const std::string& token, Input arg, DataType out) {
  Operation op = NodeBuilder(s.with_op_name(token), "PyFunc")
                     .input_list({arg})
                     .attr("token", token)
                     .attr("Tout", std::vector<DataType>{out})
                     .finalize();
  return Output(op, 0);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(py_func_kernels)

BOOST_AUTO_TEST_CASE(the_handler_runs_the_function_named_by_the_token) {
  NoHandlerAfter cleanup;
  Scope s = Scope::new_root();
  auto doubled = py_func(s, "double_it", int64_t{21}, DataType::kInt64);
  auto wrong = py_func(s, "wrong_dtype", int64_t{1}, DataType::kFloat);
  auto failing = py_func(s, "raises", int64_t{1}, DataType::kInt64);
  BOOST_REQUIRE(s.ok());
  check_error(run_graph(s, {doubled}).status(), Code::kFailedPrecondition,
              "node 'double_it' (PyFunc): no Python interpreter in this process");

  set_py_func_handler([](const std::string& token, std::vector<Tensor> args,
                         std::vector<Tensor>* results) -> Status {
    if (token == "raises") return errors::OutOfRange("the generator is done");
    if (token == "wrong_dtype") {
      results->push_back(Tensor::scalar<int64_t>(1));
      return Status::OK();
    }
    results->push_back(Tensor::scalar<int64_t>(args.at(0).scalar<int64_t>() * 2));
    return Status::OK();
  });
  auto got = run_graph(s, {doubled});
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
  BOOST_TEST(got->at(0).scalar<int64_t>() == 42);
  check_error(run_graph(s, {wrong}).status(), Code::kInvalidArgument,
              "0-th value returned by wrong_dtype is int64, but expects float32");
  check_error(run_graph(s, {failing}).status(), Code::kOutOfRange, "the generator is done");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
