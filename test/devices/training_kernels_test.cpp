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

BOOST_AUTO_TEST_CASE(rmsprop_plain_and_centered) {
  Fixture f;
  auto var = f.variable("w", {1});
  auto ms = f.variable("ms", {1});
  auto mom = f.variable("mom", {0});
  auto step =
      ops::ApplyRMSProp(f.s, var, ms, mom, 0.1, 0.9, 0.5, 1e-10, Tensor::from_vector<double>({2}));
  // ms = 0.9 + 0.1 * 4 = 1.3; mom = 0.1 * 2 / sqrt(1.3); w = 1 - mom.
  const double mom1 = 0.2 / std::sqrt(1.3 + 1e-10);
  check_tensor<double>(f.run(step), TensorShape{1}, {1 - mom1}, 1e-12);
  // ms = 0.9 * 1.3 + 0.4 = 1.57; mom = 0.5 * mom1 + 0.2 / sqrt(1.57).
  const double mom2 = 0.5 * mom1 + 0.2 / std::sqrt(1.57 + 1e-10);
  check_tensor<double>(f.run(step), TensorShape{1}, {1 - mom1 - mom2}, 1e-12);

  Fixture g;
  auto cvar = g.variable("w", {1});
  auto mg = g.variable("mg", {0});
  auto cms = g.variable("ms", {1});
  auto cmom = g.variable("mom", {0});
  auto centered = ops::ApplyCenteredRMSProp(g.s, cvar, mg, cms, cmom, 0.1, 0.9, 0.0, 1e-10,
                                            Tensor::from_vector<double>({2}));
  // ms = 1.3, mg = 0.2; w = 1 - 0.1 * 2 / sqrt(1.3 - 0.04).
  check_tensor<double>(g.run(centered), TensorShape{1}, {1 - 0.2 / std::sqrt(1.26 + 1e-10)}, 1e-12);
  check_tensor<double>(g.run(mg), TensorShape{1}, {0.2}, 1e-12);
}

BOOST_AUTO_TEST_CASE(adadelta) {
  Fixture f;
  auto var = f.variable("w", {1});
  auto accum = f.variable("a", {0});
  auto update = f.variable("u", {0});
  auto step = ops::ApplyAdadelta(f.s, var, accum, update, 1.0, 0.95, 1e-6,
                                 Tensor::from_vector<double>({2}));
  // accum = 0.05 * 4 = 0.2; u = sqrt(1e-6) / sqrt(0.2 + 1e-6) * 2; accum_update = 0.05 u^2.
  const double u = std::sqrt(1e-6) / std::sqrt(0.2 + 1e-6) * 2;
  check_tensor<double>(f.run(step), TensorShape{1}, {1 - u}, 1e-12);
  check_tensor<double>(f.run(update), TensorShape{1}, {0.05 * u * u}, 1e-15);
}

BOOST_AUTO_TEST_CASE(ftrl_with_and_without_l1) {
  Fixture f;
  auto var = f.variable("w", {0, 0});
  auto accum = f.variable("a", {0.1, 0.1});
  auto linear = f.variable("l", {0, 0});
  auto step = ops::ApplyFtrlV2(f.s, var, accum, linear, Tensor::from_vector<double>({1, 0.05}), 3.0,
                               0.1, 0.2, 0.0, -0.5);
  // new_accum = 1.1 and 0.1025; linear = g (var is 0); |1| > l1: w = (l1 - 1) / (sqrt(1.1)/3 +
  // 0.4); |0.05| <= l1: w = 0.
  check_tensor<double>(f.run(step), TensorShape{2}, {(0.1 - 1) / (std::sqrt(1.1) / 3 + 0.4), 0},
                       1e-12);
  check_tensor<double>(f.run(accum), TensorShape{2}, {1.1, 0.1025}, 1e-12);
  // A learning_rate_power other than -0.5, and l2 shrinkage.
  Fixture g;
  auto gv = g.variable("w", {0.5});
  auto ga = g.variable("a", {1});
  auto gl = g.variable("l", {0});
  auto general = ops::ApplyFtrlV2(g.s, gv, ga, gl, Tensor::from_vector<double>({1}), 1.0, 0.0, 0.0,
                                  0.25, -1.0);
  // g' = 1 + 2 * 0.25 * 0.5 = 1.25; new_accum = 2; linear = 1.25 - (2 - 1) / 1 * 0.5 = 0.75;
  // w = -0.75 / 2.
  check_tensor<double>(g.run(general), TensorShape{1}, {-0.375}, 1e-12);
  auto bad = ops::ApplyFtrlV2(g.s.with_op_name("bad_ftrl"), gv, ga, gl,
                              Tensor::from_vector<double>({1}), 1.0, -1.0, 0.0, 0.0, -0.5);
  check_error(run_graph(g.s, {bad}, {}, {}, &g.device).status(), Code::kInvalidArgument,
              "node 'bad_ftrl' (ApplyFtrlV2): Ftrl needs lr > 0, l1 >= 0");
}

BOOST_AUTO_TEST_CASE(proximal_gradient_descent_and_adagrad) {
  Fixture f;
  auto var = f.variable("w", {1, 0.01});
  auto step = ops::ApplyProximalGradientDescent(f.s, var, 0.5, 0.1, 1.0,
                                                Tensor::from_vector<double>({1, 0}));
  // prox = [0.5, 0.01]; shrink by alpha * l1 = 0.05 and divide by 1 + alpha * l2 = 1.5.
  check_tensor<double>(f.run(step), TensorShape{1 * 2}, {0.45 / 1.5, 0}, 1e-12);
  Fixture g;
  auto gv = g.variable("w", {1});
  auto ga = g.variable("a", {0});
  auto adagrad =
      ops::ApplyProximalAdagrad(g.s, gv, ga, 0.5, 0.0, 0.0, Tensor::from_vector<double>({2}));
  // accum = 4, rate = 0.25: w = 1 - 0.5 (no regularization: plain Adagrad without the 0.1).
  check_tensor<double>(g.run(adagrad), TensorShape{1}, {0.5}, 1e-12);
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
