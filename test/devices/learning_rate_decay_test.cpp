// Tests for the learning-rate schedules (graph/learning_rate_decay.hpp): each against its formula
// computed here, at steps before, at and after decay_steps, and their argument errors.
#include <cmath>
#include <numbers>

#include "devices/run_graph.hpp"
#include "troupe/graph/learning_rate_decay.hpp"

namespace troupe {
using testing::check_error;
using testing::run_graph;

namespace {

// The schedule `make` builds, evaluated with the global step fed as each of `steps`.
std::vector<double> rates(const std::function<StatusOr<Output>(const Scope&, const Output&)>& make,
                          const std::vector<int64_t>& steps) {
  Scope s = Scope::new_root();
  auto step = ops::Placeholder(s, DataType::kInt64);
  auto rate = make(s, step);
  BOOST_REQUIRE_MESSAGE(rate.ok(), rate.status().to_string());
  std::vector<double> out;
  for (int64_t at : steps) {
    auto values = run_graph(s, {*rate}, {{step, Tensor(at)}});
    BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
    const Tensor& t = values->at(0);
    out.push_back(t.dtype() == DataType::kDouble ? t.scalar<double>() : t.scalar<float>());
  }
  return out;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    BOOST_TEST(std::abs(got[i] - want[i]) <= 1e-6 * std::max(1.0, std::abs(want[i])),
               "rate " << i << ": " << got[i] << " != " << want[i]);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(learning_rate_decay)

BOOST_AUTO_TEST_CASE(exponential_natural_and_inverse_time) {
  const std::vector<int64_t> steps = {0, 5, 10, 25};
  std::vector<double> exp_smooth, exp_stair, natural, inverse;
  for (int64_t t : steps) {
    exp_smooth.push_back(0.1 * std::pow(0.96, t / 10.0));
    exp_stair.push_back(0.1 * std::pow(0.96, std::floor(t / 10.0)));
    natural.push_back(0.1 * std::exp(-0.5 * t / 10.0));
    inverse.push_back(0.1 / (1 + 0.5 * std::floor(t / 10.0)));
  }
  check_close(
      rates([](const Scope& s, const Output& g) { return exponential_decay(s, 0.1, g, 10, 0.96); },
            steps),
      exp_smooth);
  check_close(rates([](const Scope& s,
                       const Output& g) { return exponential_decay(s, 0.1, g, 10, 0.96, true); },
                    steps),
              exp_stair);
  check_close(
      rates([](const Scope& s, const Output& g) { return natural_exp_decay(s, 0.1, g, 10, 0.5); },
            steps),
      natural);
  check_close(rates([](const Scope& s,
                       const Output& g) { return inverse_time_decay(s, 0.1, g, 10, 0.5, true); },
                    steps),
              inverse);
}

BOOST_AUTO_TEST_CASE(polynomial_holds_or_cycles) {
  const std::vector<int64_t> steps = {0, 5, 10, 15, 20};
  auto formula = [](double t, double steps_) {
    return (0.1 - 0.01) * std::pow(1 - t / steps_, 2.0) + 0.01;
  };
  std::vector<double> held, cycled;
  for (int64_t t : steps) {
    held.push_back(formula(std::min<double>(t, 10), 10));
    double cycle_steps = 10 * (t == 0 ? 1 : std::ceil(t / 10.0));
    cycled.push_back(formula(t, cycle_steps));
  }
  check_close(rates(
                  [](const Scope& s, const Output& g) {
                    return polynomial_decay(s, 0.1, g, 10, {.end_learning_rate = 0.01, .power = 2});
                  },
                  steps),
              held);
  check_close(rates(
                  [](const Scope& s, const Output& g) {
                    return polynomial_decay(s, 0.1, g, 10,
                                            {.end_learning_rate = 0.01, .power = 2, .cycle = true});
                  },
                  steps),
              cycled);
}

BOOST_AUTO_TEST_CASE(cosine) {
  const std::vector<int64_t> steps = {0, 25, 50, 100, 150};
  std::vector<double> want;
  for (int64_t t : steps) {
    double c = 0.5 * (1 + std::cos(std::numbers::pi * std::min<double>(t, 100) / 100));
    want.push_back(0.2 * ((1 - 0.1) * c + 0.1));
  }
  check_close(
      rates([](const Scope& s, const Output& g) { return cosine_decay(s, 0.2, g, 100, 0.1); },
            steps),
      want);
}

BOOST_AUTO_TEST_CASE(piecewise_constant_includes_each_boundary_in_the_interval_before) {
  check_close(rates(
                  [](const Scope& s, const Output& g) {
                    return piecewise_constant(s, g, {100, 200}, {1.0, 0.5, 0.1});
                  },
                  {0, 100, 101, 200, 201, 5000}),
              {1.0, 1.0, 0.5, 0.5, 0.1, 0.1});
}

BOOST_AUTO_TEST_CASE(a_float64_learning_rate_tensor_keeps_its_dtype) {
  check_close(
      rates([](const Scope& s,
               const Output& g) { return exponential_decay(s, ops::Const(s, 0.5), g, 1, 0.5); },
            {2}),
      {0.125});
}

BOOST_AUTO_TEST_CASE(bad_arguments_are_invalid_argument) {
  Scope s = Scope::new_root();
  auto step = ops::Placeholder(s, DataType::kInt64);
  check_error(exponential_decay(s, 0.1, Output(), 10, 0.9).status(), Code::kInvalidArgument,
              "global_step is required for ExponentialDecay");
  check_error(cosine_decay(s, 0.1, step, 0).status(), Code::kInvalidArgument,
              "CosineDecay: decay_steps must be > 0, got 0");
  check_error(exponential_decay(s, 0.1, ops::Const(s, "step"), 10, 0.9).status(),
              Code::kInvalidArgument, "global_step 'Const:0' must be a number");
  check_error(polynomial_decay(s, ops::Const(s, 1), step, 10).status(), Code::kInvalidArgument,
              "learning_rate 'Const_1:0' must be float32 or float64");
  check_error(piecewise_constant(s, step, {1, 2}, {1.0, 2.0}).status(), Code::kInvalidArgument,
              "boundaries should be 1 less than the length of values; got 2 boundaries and 2");
  check_error(piecewise_constant(s, step, {2, 1}, {1.0, 2.0, 3.0}).status(), Code::kInvalidArgument,
              "boundaries must increase");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
