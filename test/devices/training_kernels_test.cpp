// Tests for the optimizer update kernels against hand-computed values, and their errors.
#include "devices/run_graph.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;

namespace {

struct Fixture {
  Device device{"/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1};
  Scope s = Scope::new_root();

  Output variable(const std::string& name, std::vector<double> values) {
    auto v = ops::Variable(s.with_op_name(name), TensorShape{static_cast<int64_t>(values.size())},
                           DataType::kDouble);
    BOOST_REQUIRE(
        run_graph(s, {}, {}, {ops::Assign(s, v, Tensor::from_vector(values)).op()}, &device).ok());
    return v;
  }
  Tensor run(const Output& out) {
    auto result = run_graph(s, {out}, {}, {}, &device);
    BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
    return result->at(0);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(training_kernels)

BOOST_AUTO_TEST_CASE(gradient_descent) {
  Fixture f;
  auto var = f.variable("w", {1, 2});
  auto step = ops::ApplyGradientDescent(f.s, var, 0.5, Tensor::from_vector<double>({2, -4}));
  check_tensor<double>(f.run(step), TensorShape{2}, {0, 4});
  check_tensor<double>(f.run(step), TensorShape{2}, {-1, 6});
}

BOOST_AUTO_TEST_CASE(momentum_and_nesterov) {
  Fixture f;
  auto var = f.variable("w", {1});
  auto accum = f.variable("a", {0});
  auto step = ops::ApplyMomentum(f.s, var, accum, 0.1, Tensor::from_vector<double>({1}), 0.9);
  // accum = 1, w = 1 - 0.1; then accum = 0.9 + 1 = 1.9, w = 0.9 - 0.19.
  check_tensor<double>(f.run(step), TensorShape{1}, {0.9});
  check_tensor<double>(f.run(step), TensorShape{1}, {0.71});
  check_tensor<double>(f.run(accum), TensorShape{1}, {1.9});

  Fixture g;
  auto nv = g.variable("w", {1});
  auto na = g.variable("a", {0});
  auto nesterov = ops::ApplyMomentum(g.s, nv, na, 0.1, Tensor::from_vector<double>({1}), 0.9,
                                     /*nesterov=*/true);
  // accum = 1; w = 1 - (0.1 * 1 + 0.1 * 0.9 * 1) = 0.81.
  check_tensor<double>(g.run(nesterov), TensorShape{1}, {0.81});
}

BOOST_AUTO_TEST_CASE(adagrad) {
  Fixture f;
  auto var = f.variable("w", {1});
  auto accum = f.variable("a", {0.1});
  auto step = ops::ApplyAdagrad(f.s, var, accum, 0.5, Tensor::from_vector<double>({2}));
  // accum = 4.1; w = 1 - 0.5 * 2 / sqrt(4.1).
  check_tensor<double>(f.run(step), TensorShape{1}, {1 - 1.0 / std::sqrt(4.1)}, 1e-12);
}

BOOST_AUTO_TEST_CASE(adam) {
  Fixture f;
  auto var = f.variable("w", {1});
  auto m = f.variable("m", {0});
  auto v = f.variable("v", {0});
  auto step = ops::ApplyAdam(f.s, var, m, v, 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8,
                             Tensor::from_vector<double>({2}));
  // m = 0.2, v = 0.004; lr_t = 0.1 * sqrt(0.001) / 0.1; w = 1 - lr_t * 0.2 / (sqrt(0.004) + 1e-8)
  double lr_t = 0.1 * std::sqrt(1 - 0.999) / (1 - 0.9);
  double expected = 1 - lr_t * 0.2 / (std::sqrt(0.004) + 1e-8);
  check_tensor<double>(f.run(step), TensorShape{1}, {expected}, 1e-12);
  check_tensor<double>(f.run(m), TensorShape{1}, {0.2}, 1e-12);
  check_tensor<double>(f.run(v), TensorShape{1}, {0.004}, 1e-12);
}

BOOST_AUTO_TEST_CASE(errors_name_the_node) {
  Fixture f;
  auto var = ops::Variable(f.s.with_op_name("fresh"), TensorShape{2}, DataType::kDouble);
  auto step = ops::ApplyGradientDescent(f.s.with_op_name("descend"), var, 0.5,
                                        Tensor::from_vector<double>({1, 1}));
  check_error(run_graph(f.s, {step}, {}, {}, &f.device).status(), Code::kFailedPrecondition,
              "uninitialized value 'fresh'");
  auto w = f.variable("w", {1, 2});
  auto g = ops::Placeholder(f.s, DataType::kDouble);
  auto bad = ops::ApplyGradientDescent(f.s.with_op_name("bad"), w, 0.5, g);
  check_error(
      run_graph(f.s, {bad}, {{g, Tensor::from_vector<double>({1, 2, 3})}}, {}, &f.device).status(),
      Code::kInvalidArgument, "node 'bad'");
}

BOOST_AUTO_TEST_CASE(is_variable_initialized) {
  Fixture f;
  auto var = ops::Variable(f.s, TensorShape{}, DataType::kFloat);
  auto check = ops::IsVariableInitialized(f.s, var);
  BOOST_TEST(!f.run(check).scalar<bool>());
  BOOST_REQUIRE(run_graph(f.s, {}, {}, {ops::Assign(f.s, var, 1.f).op()}, &f.device).ok());
  BOOST_TEST(f.run(check).scalar<bool>());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
