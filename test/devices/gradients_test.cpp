// Numeric tests of add_gradients: for every op with a gradient, the symbolic gradient is run and
// compared with central finite differences of the forward graph, in float64, on random inputs
// (fixed seeds); broadcasting, reductions (every axis, keep_dims, negative axes, unknown
// shapes), ties in Max/Min/Maximum (by hand: finite differences cannot split ties), MatMul's
// transposes, softmax and its cross-entropy, a two-layer MLP, a Variable as x, and second-order
// gradients through the fused backward ops.
#include <cmath>
#include <functional>
#include <random>

#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/gradients.hpp"

namespace troupe {
namespace {
using testing::check_tensor;
using testing::Feed;
using testing::run_graph;
using testing::run_one;

// What the gradient checker's placeholders tell shape inference.
enum class Shapes {
  kStatic,       // the fed shapes
  kUnknownDims,  // the rank, every dimension unknown
  kUnknownRank,  // nothing
};

struct CheckOptions {
  uint32_t seed = 1234;
  double low = -1, high = 1;  // random inputs are drawn uniformly from [low, high]
  Shapes shapes = Shapes::kStatic;
  double eps = 1e-6;
  double tolerance = 1e-6;  // |symbolic - numeric| <= tolerance * max(1, |numeric|)
};

// Builds the function being checked from its inputs (float64 placeholders).
using BuildFn = std::function<Output(const Scope& scope, const std::vector<Output>& inputs)>;

Tensor random_tensor(const TensorShape& shape, std::mt19937& rng, double low, double high) {
  std::uniform_real_distribution<double> dist(low, high);
  Tensor t(DataType::kDouble, shape);
  for (double& v : t.flat<double>())
    v = dist(rng);
  return t;
}

Output sum_all(const Scope& s, const Output& x, int rank) {
  std::vector<int32_t> axes;
  for (int i = 0; i < rank; ++i)
    axes.push_back(i);
  return ops::Sum(s, x, Tensor::from_vector(axes));
}

// The worst disagreement gradient_error found.
struct GradientError {
  double error = 0;   // |symbolic - numeric| / max(1, |numeric|)
  std::string where;  // which element, and both values
};

// Compares d(loss)/d(input) for every input of `build`, where loss = sum(output * w) for a
// fixed random w (so every output element matters, each differently): the symbolic gradient
// from add_gradients (with `registry`) against central finite differences, element by element.
// Returns the worst relative error; setup failures fail the test at once.
GradientError gradient_error(const BuildFn& build, const std::vector<TensorShape>& input_shapes,
                             const CheckOptions& options,
                             const GradientRegistry& registry = GradientRegistry::global()) {
  std::mt19937 rng(options.seed);
  Scope root = Scope::new_root();
  std::vector<Output> inputs;
  std::vector<Tensor> values;
  for (size_t i = 0; i < input_shapes.size(); ++i) {
    PartialShape declared = input_shapes[i];
    if (options.shapes == Shapes::kUnknownDims) {
      declared = PartialShape::unknown_of_rank(input_shapes[i].rank());
    } else if (options.shapes == Shapes::kUnknownRank) {
      declared = PartialShape::unknown();
    }
    inputs.push_back(ops::Placeholder(root.with_op_name("input" + std::to_string(i)),
                                      DataType::kDouble, declared));
    values.push_back(random_tensor(input_shapes[i], rng, options.low, options.high));
  }
  const Output out = build(root, inputs);
  BOOST_REQUIRE_MESSAGE(root.ok(), root.status().to_string());
  auto feeds_for = [&](const std::vector<Tensor>& v) {
    std::vector<Feed> feeds;
    for (size_t i = 0; i < inputs.size(); ++i)
      feeds.push_back({inputs[i], v[i]});
    return feeds;
  };
  // The output's shape is only known once it runs (the placeholders may hide it).
  auto forward = run_graph(root, {out}, feeds_for(values));
  BOOST_REQUIRE_MESSAGE(forward.ok(), forward.status().to_string());
  const Tensor weight = random_tensor(forward->at(0).shape(), rng, -1, 1);
  const Output loss =
      sum_all(root, ops::Mul(root, out, ops::Const(root, weight)), forward->at(0).rank());

  auto grads = add_gradients(root, {loss}, inputs, {}, registry);
  BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
  for (size_t i = 0; i < inputs.size(); ++i)
    BOOST_REQUIRE_MESSAGE(grads->at(i).valid(), "no gradient for input " << i);
  auto symbolic = run_graph(root, *grads, feeds_for(values));
  BOOST_REQUIRE_MESSAGE(symbolic.ok(), symbolic.status().to_string());

  auto loss_at = [&](const std::vector<Tensor>& v) {
    auto result = run_graph(root, {loss}, feeds_for(v));
    BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
    return result->at(0).scalar<double>();
  };
  GradientError worst;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& g = symbolic->at(i);
    BOOST_TEST_REQUIRE(dtype_name(g.dtype()) == "float64");
    BOOST_TEST_REQUIRE(g.shape().to_string() == input_shapes[i].to_string(),
                       "gradient shape of input " << i);
    for (int64_t k = 0; k < values[i].num_elements(); ++k) {
      std::vector<Tensor> plus = values, minus = values;
      plus[i] = values[i].deep_copy();
      minus[i] = values[i].deep_copy();
      plus[i].data<double>()[k] += options.eps;
      minus[i].data<double>()[k] -= options.eps;
      const double numeric = (loss_at(plus) - loss_at(minus)) / (2 * options.eps);
      const double analytic = g.data<double>()[k];
      const double error = std::abs(analytic - numeric) / std::max(1.0, std::abs(numeric));
      if (!(error <= worst.error)) {  // NaN counts as worst
        worst.error = error;
        worst.where =
            fmt::format("input {} element {}: symbolic {} vs numeric {}", i, k, analytic, numeric);
      }
    }
  }
  return worst;
}

// Requires the symbolic gradients of `build` to match finite differences within the tolerance.
void check_gradient(const BuildFn& build, const std::vector<TensorShape>& input_shapes,
                    const CheckOptions& options = {}) {
  const GradientError worst = gradient_error(build, input_shapes, options);
  BOOST_TEST(worst.error <= options.tolerance, worst.where);
}

// A unary op's builder as a BuildFn.
BuildFn unary(Output (*op)(const Scope&, const Input&)) {
  return [op](const Scope& s, const std::vector<Output>& in) { return op(s, in[0]); };
}

BuildFn binary(Output (*op)(const Scope&, const Input&, const Input&)) {
  return [op](const Scope& s, const std::vector<Output>& in) { return op(s, in[0], in[1]); };
}

// The shape pairs every broadcasting binary op is checked on.
const std::vector<std::pair<TensorShape, TensorShape>> kBroadcastPairs = {
    {TensorShape{2, 3}, TensorShape{2, 3}},   {TensorShape{2, 3}, TensorShape{3}},
    {TensorShape{3}, TensorShape{2, 3}},      {TensorShape{2, 1}, TensorShape{1, 3}},
    {TensorShape{}, TensorShape{2, 3}},       {TensorShape{2, 3}, TensorShape{}},
    {TensorShape{2, 1, 3}, TensorShape{4, 1}}};

void check_binary_everywhere(Output (*op)(const Scope&, const Input&, const Input&),
                             CheckOptions options = {}) {
  for (const auto& [a, b] : kBroadcastPairs) {
    BOOST_TEST_CONTEXT("shapes " << a.to_string() << " and " << b.to_string()) {
      for (Shapes shapes : {Shapes::kStatic, Shapes::kUnknownDims, Shapes::kUnknownRank}) {
        options.shapes = shapes;
        check_gradient(binary(op), {a, b}, options);
      }
    }
  }
}

// Feeds `x`, takes d(sum(y * w))/dx with w = `weights`, and returns it.
Tensor gradient_of(const std::function<Output(const Scope&, const Output&)>& build, const Tensor& x,
                   const Tensor& weights) {
  Scope s = Scope::new_root();
  auto p = ops::Placeholder(s, x.dtype());
  auto y = build(s, p);
  auto loss = sum_all(s, ops::Mul(s, y, ops::Const(s, weights)), weights.rank());
  auto grads = add_gradients(s, {loss}, {p});
  BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
  return run_one(s, grads->at(0), {{p, x}});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gradients)

BOOST_AUTO_TEST_CASE(the_checker_catches_a_wrong_gradient) {
  // A deliberately wrong gradient for Square (dy * x instead of dy * 2x), in a registry of its
  // own, must disagree with finite differences: the checker can fail.
  GradientRegistry wrong;
  BOOST_REQUIRE(wrong
                    .register_gradient("Square",
                                       [](const Scope& s, const Operation& op,
                                          const std::vector<Output>& dy, std::vector<Output>* dx) {
                                         *dx = {ops::Mul(s, dy[0], op_input(op, 0))};
                                         return s.status();
                                       })
                    .ok());
  for (const char* op : {"Mul", "Sum"}) {
    auto fn = GradientRegistry::global().lookup(op);
    BOOST_REQUIRE(fn.ok() && *fn);
    BOOST_REQUIRE(wrong.register_gradient(op, *fn).ok());
  }
  const BuildFn square = unary(ops::Square);
  const GradientError bad =
      gradient_error(square, {TensorShape{2, 3}}, {.low = 0.5, .high = 2}, wrong);
  BOOST_TEST(bad.error > 0.1, "the wrong gradient passed: " << bad.where);
  const GradientError right = gradient_error(square, {TensorShape{2, 3}}, {.low = 0.5, .high = 2});
  BOOST_TEST(right.error <= 1e-6, right.where);
}

BOOST_AUTO_TEST_CASE(unary_math) {
  check_gradient(unary(ops::Identity), {TensorShape{2, 3}});
  check_gradient(unary(ops::Neg), {TensorShape{2, 3}});
  check_gradient(unary(ops::Square), {TensorShape{2, 3}});
  check_gradient(unary(ops::Exp), {TensorShape{2, 3}});
  check_gradient(unary(ops::Sqrt), {TensorShape{2, 3}}, {.low = 0.5, .high = 2});
  check_gradient(unary(ops::Log), {TensorShape{2, 3}}, {.low = 0.5, .high = 2});
  check_gradient(unary(ops::Square), {TensorShape{}});
  check_gradient(unary(ops::Exp), {TensorShape{4}}, {.shapes = Shapes::kUnknownRank});
  check_gradient(unary(ops::Abs), {TensorShape{2, 3}}, {.low = 0.5, .high = 2});
  check_gradient(unary(ops::Abs), {TensorShape{2, 3}}, {.low = -2, .high = -0.5});
  check_gradient(unary(ops::Rsqrt), {TensorShape{2, 3}}, {.low = 0.5, .high = 2});
  check_gradient(unary(ops::Reciprocal), {TensorShape{2, 3}}, {.low = 0.5, .high = 2});
  check_gradient(unary(ops::Expm1), {TensorShape{2, 3}});
  check_gradient(unary(ops::Log1p), {TensorShape{2, 3}}, {.low = 0, .high = 2});
  check_gradient(unary(ops::Cos), {TensorShape{2, 3}});
  check_gradient(unary(ops::Sin), {TensorShape{2, 3}});
  check_gradient(unary(ops::Sign), {TensorShape{2, 3}}, {.low = 0.5, .high = 2});
}

BOOST_AUTO_TEST_CASE(pow_and_squared_difference_with_broadcasting) {
  check_binary_everywhere(ops::Pow, {.low = 0.5, .high = 2});
  check_binary_everywhere(ops::SquaredDifference);
  // Where x <= 0 the gradient with respect to y is 0 (the real log is undefined there).
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kDouble);
  auto y = ops::Placeholder(s, DataType::kDouble);
  auto grads = add_gradients(s, {ops::Sum(s, ops::Pow(s, x, y), 0)}, {x, y});
  BOOST_REQUIRE(grads.ok());
  auto values = run_graph(
      s, *grads,
      {{x, Tensor::from_vector<double>({-2, 0, 2})}, {y, Tensor::from_vector<double>({2, 2, 2})}});
  BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
  check_tensor<double>(values->at(0), TensorShape{3}, {-4, 0, 4}, 1e-12);
  check_tensor<double>(values->at(1), TensorShape{3}, {0, 0, 4 * std::log(2.0)}, 1e-12);
}

BOOST_AUTO_TEST_CASE(select_routes_the_gradient_to_the_chosen_side) {
  const BuildFn by_rows = [](const Scope& s, const std::vector<Output>& in) {
    return ops::Select(s, Tensor::from_vector<bool>({true, false}), in[0], in[1]);
  };
  check_gradient(by_rows, {TensorShape{2, 3}, TensorShape{2, 3}});
  const BuildFn elementwise = [](const Scope& s, const std::vector<Output>& in) {
    return ops::Select(s, ops::Greater(s, in[0], in[1]), in[0], in[1]);
  };
  check_gradient(elementwise, {TensorShape{2, 3}, TensorShape{2, 3}});
}

BOOST_AUTO_TEST_CASE(stop_gradient_passes_its_value_and_no_gradient) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kDouble);
  auto stopped = ops::StopGradient(s, ops::Square(s, x));
  auto y = ops::Sum(s, ops::Add(s, ops::Mul(s, stopped, x), x), 0);  // d/dx = x^2 + 1
  auto grads = add_gradients(s, {y}, {x});
  BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
  auto values = run_graph(s, {grads->at(0), stopped}, {{x, Tensor::from_vector<double>({2, -3})}});
  BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
  check_tensor<double>(values->at(0), TensorShape{2}, {5, 10}, 0);
  check_tensor<double>(values->at(1), TensorShape{2}, {4, 9}, 0);
}

BOOST_AUTO_TEST_CASE(floor_ceil_and_round_have_no_gradient) {
  for (auto op : {ops::Floor, ops::Ceil, ops::Round}) {
    Scope s = Scope::new_root();
    auto x = ops::Placeholder(s, DataType::kDouble);
    auto grads = add_gradients(s, {ops::Sum(s, ops::Mul(s, op(s, x), x), 0)}, {x});
    BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
    // Only the direct path through Mul contributes: d(f(x) * x)/dx = f(x).
    auto values = run_graph(s, *grads, {{x, Tensor::from_vector<double>({1.25, -0.5})}});
    BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
    Scope e = Scope::new_root();
    check_tensor<double>(
        values->at(0), TensorShape{2},
        run_one(e, op(e, Tensor::from_vector<double>({1.25, -0.5}))).to_vector<double>(), 0);
  }
}

BOOST_AUTO_TEST_CASE(add_with_broadcasting) {
  check_binary_everywhere(ops::Add);
}

BOOST_AUTO_TEST_CASE(sub_with_broadcasting) {
  check_binary_everywhere(ops::Sub);
}

BOOST_AUTO_TEST_CASE(mul_with_broadcasting) {
  check_binary_everywhere(ops::Mul);
}

BOOST_AUTO_TEST_CASE(div_with_broadcasting) {
  check_binary_everywhere(ops::Div, {.low = 0.5, .high = 2});
}

BOOST_AUTO_TEST_CASE(maximum_with_broadcasting) {
  check_binary_everywhere(ops::Maximum);
}

BOOST_AUTO_TEST_CASE(minimum_with_broadcasting) {
  check_binary_everywhere(ops::Minimum);
}

BOOST_AUTO_TEST_CASE(minimum_ties_go_to_x) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kDouble);
  auto y = ops::Placeholder(s, DataType::kDouble);
  auto loss = ops::Sum(s, ops::Mul(s, ops::Minimum(s, x, y), {1.0, 2.0, 3.0, 4.0}), 0);
  auto grads = add_gradients(s, {loss}, {x, y});
  BOOST_REQUIRE(grads.ok());
  auto values = run_graph(s, *grads,
                          {{x, Tensor::from_vector<double>({1, 2, 3, -1})},
                           {y, Tensor::from_vector<double>({1, 1, 4, -1})}});
  BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
  // x wins at 0 (tie), 2 and 3 (tie); y at 1.
  check_tensor<double>(values->at(0), TensorShape{4}, {1, 0, 3, 4}, 0);
  check_tensor<double>(values->at(1), TensorShape{4}, {0, 2, 0, 0}, 0);
}

BOOST_AUTO_TEST_CASE(maximum_ties_go_to_x) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kDouble);
  auto y = ops::Placeholder(s, DataType::kDouble);
  auto loss = ops::Sum(s, ops::Mul(s, ops::Maximum(s, x, y), {1.0, 2.0, 3.0, 4.0}), 0);
  auto grads = add_gradients(s, {loss}, {x, y});
  BOOST_REQUIRE(grads.ok());
  auto values = run_graph(s, *grads,
                          {{x, Tensor::from_vector<double>({1, 2, 3, -1})},
                           {y, Tensor::from_vector<double>({1, 1, 4, -1})}});
  BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
  // x wins at 0 (tie), 1 and 3 (tie); y at 2.
  check_tensor<double>(values->at(0), TensorShape{4}, {1, 2, 0, 4}, 0);
  check_tensor<double>(values->at(1), TensorShape{4}, {0, 0, 3, 0}, 0);
  // Broadcast y: its gradient sums the places it won.
  auto scalar_y = run_graph(
      s, *grads,
      {{x, Tensor::from_vector<double>({1, 2, 3, -1})}, {y, Tensor::from_vector<double>({2})}});
  BOOST_REQUIRE_MESSAGE(scalar_y.ok(), scalar_y.status().to_string());
  check_tensor<double>(scalar_y->at(0), TensorShape{4}, {0, 2, 3, 0}, 0);
  check_tensor<double>(scalar_y->at(1), TensorShape{1}, {1 + 4}, 0);
}

BOOST_AUTO_TEST_CASE(matmul_every_transpose) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      BOOST_TEST_CONTEXT("transpose_a " << ta << " transpose_b " << tb) {
        TensorShape a = ta ? TensorShape{3, 2} : TensorShape{2, 3};
        TensorShape b = tb ? TensorShape{4, 3} : TensorShape{3, 4};
        auto build = [ta, tb](const Scope& s, const std::vector<Output>& in) {
          return ops::MatMul(s, in[0], in[1], {.transpose_a = ta, .transpose_b = tb});
        };
        check_gradient(build, {a, b});
        check_gradient(build, {a, b}, {.shapes = Shapes::kUnknownRank});
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(reductions_over_each_axis) {
  using Reduce = Output (*)(const Scope&, const Input&, const Input&, ops::ReduceOptions);
  const std::vector<std::pair<const char*, Reduce>> reductions = {
      {"Sum", ops::Sum}, {"Mean", ops::Mean}, {"Min", ops::Min}, {"Max", ops::Max}};
  const std::vector<std::pair<TensorShape, Tensor>> cases = {
      {TensorShape{2, 3}, Tensor::from_vector<int32_t>({0})},
      {TensorShape{2, 3}, Tensor::from_vector<int32_t>({1})},
      {TensorShape{2, 3}, Tensor::from_vector<int32_t>({0, 1})},
      {TensorShape{2, 3}, Tensor::from_vector<int32_t>({})},
      {TensorShape{2, 3}, Tensor(int32_t{-1})},
      {TensorShape{2, 3}, Tensor::from_vector<int64_t>({-2, 1})},
      {TensorShape{2, 3, 4}, Tensor::from_vector<int32_t>({0, 2})},
      {TensorShape{2, 3, 4}, Tensor::from_vector<int32_t>({1})},
      {TensorShape{2, 3, 4}, Tensor::from_vector<int32_t>({-1, 0, 1})},
      {TensorShape{5}, Tensor(int32_t{0})},
      {TensorShape{}, Tensor::from_vector<int32_t>({})}};
  for (const auto& [name, reduce] : reductions) {
    for (const auto& [shape, axes] : cases) {
      for (bool keep_dims : {false, true}) {
        for (Shapes shapes : {Shapes::kStatic, Shapes::kUnknownDims, Shapes::kUnknownRank}) {
          BOOST_TEST_CONTEXT(name << " of " << shape.to_string() << " over " << axes
                                  << " keep_dims " << keep_dims << " shapes "
                                  << static_cast<int>(shapes)) {
            auto build = [reduce = reduce, axes = axes, keep_dims](const Scope& s,
                                                                   const std::vector<Output>& in) {
              return reduce(s, in[0], axes, {.keep_dims = keep_dims});
            };
            check_gradient(build, {shape}, {.shapes = shapes});
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(reduction_axes_known_only_when_running) {
  // The axes come from a placeholder: the gradient redoes the reduction to find its shape.
  for (bool keep_dims : {false, true}) {
    Scope s = Scope::new_root();
    auto x = ops::Placeholder(s, DataType::kDouble, PartialShape({2, 3}));
    auto axes = ops::Placeholder(s, DataType::kInt32);
    auto loss = ops::Sum(s, ops::Mean(s, ops::Square(s, x), axes, {.keep_dims = keep_dims}), {0});
    auto grads = add_gradients(s, {loss}, {x});
    BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
    const Tensor value = value_or_throw(Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}));
    // loss = sum_i mean_j x_ij^2 over axis 1: d/dx_ij = 2 x_ij / 3.
    auto result =
        run_graph(s, {grads->at(0)}, {{x, value}, {axes, Tensor::from_vector<int32_t>({1})}});
    BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
    check_tensor<double>(result->at(0), TensorShape{2, 3},
                         {2.0 / 3, 4.0 / 3, 2, 8.0 / 3, 10.0 / 3, 4}, 1e-12);
  }
}

BOOST_AUTO_TEST_CASE(max_and_min_split_ties_equally) {
  const Tensor x = value_or_throw(Tensor::from_vector<double>({1, 3, 3, 2, 2, 2}, {2, 3}));
  const Tensor ones_row = Tensor::from_vector<double>({1, 1});
  auto max_rows = [](const Scope& s, const Output& in) { return ops::Max(s, in, 1); };
  check_tensor<double>(gradient_of(max_rows, x, ones_row), TensorShape{2, 3},
                       {0, 0.5, 0.5, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-12);
  auto min_rows = [](const Scope& s, const Output& in) { return ops::Min(s, in, -1); };
  check_tensor<double>(gradient_of(min_rows, x, Tensor::from_vector<double>({2, 6})),
                       TensorShape{2, 3}, {2, 0, 0, 2, 2, 2}, 1e-12);
  auto max_all = [](const Scope& s, const Output& in) {
    return ops::Max(s, in, {0, 1}, {.keep_dims = true});
  };
  check_tensor<double>(
      gradient_of(max_all, x, value_or_throw(Tensor::from_vector<double>({4}, {1, 1}))),
      TensorShape{2, 3}, {0, 2, 2, 0, 0, 0}, 1e-12);
  auto min_columns = [](const Scope& s, const Output& in) { return ops::Min(s, in, 0); };
  check_tensor<double>(gradient_of(min_columns, x, Tensor::from_vector<double>({1, 1, 1})),
                       TensorShape{2, 3}, {1, 0, 0, 0, 1, 1}, 1e-12);
}

BOOST_AUTO_TEST_CASE(reshape) {
  auto build = [](const Scope& s, const std::vector<Output>& in) {
    return ops::Reshape(s, in[0], {3, -1});
  };
  check_gradient(build, {TensorShape{2, 3}});
  check_gradient(build, {TensorShape{6}}, {.shapes = Shapes::kUnknownRank});
}

BOOST_AUTO_TEST_CASE(add_n_and_a_tensor_used_twice) {
  auto build = [](const Scope& s, const std::vector<Output>& in) {
    return ops::AddN(s, {in[0], ops::Mul(s, in[1], in[0]), in[0]});
  };
  check_gradient(build, {TensorShape{2, 3}, TensorShape{2, 3}});
  // x feeds two consumers whose gradients are summed (AddN in the gradient graph).
  check_gradient(binary(ops::Mul), {TensorShape{3}, TensorShape{3}});
  auto twice = [](const Scope& s, const std::vector<Output>& in) {
    return ops::Mul(s, in[0], in[0]);
  };
  check_gradient(twice, {TensorShape{2, 2}});
}

BOOST_AUTO_TEST_CASE(fill_and_broadcast_to) {
  auto fill = [](const Scope& s, const std::vector<Output>& in) {
    return ops::Fill(s, {2, 3}, in[0]);
  };
  check_gradient(fill, {TensorShape{}});
  for (const auto& [from, to] : std::vector<std::pair<TensorShape, Tensor>>{
           {TensorShape{3}, Tensor::from_vector<int32_t>({2, 3})},
           {TensorShape{2, 1}, Tensor::from_vector<int32_t>({2, 3})},
           {TensorShape{}, Tensor::from_vector<int64_t>({2, 2})},
           {TensorShape{2, 1, 3}, Tensor::from_vector<int32_t>({4, 2, 5, 3})},
           {TensorShape{2, 3}, Tensor::from_vector<int32_t>({2, 3})}}) {
    auto build = [&to = to](const Scope& s, const std::vector<Output>& in) {
      return ops::BroadcastTo(s, in[0], to);
    };
    check_gradient(build, {from});
    check_gradient(build, {from}, {.shapes = Shapes::kUnknownRank});
  }
}

BOOST_AUTO_TEST_CASE(cast_between_floating_types) {
  // Through float32 finite differences are too coarse: compare with the formula instead.
  // y = Cast(Square(Cast(x, float32)), float64): dy/dx = 2x (in float32 precision).
  auto square_in_float = [](const Scope& s, const Output& x) {
    return ops::Cast(s, ops::Square(s, ops::Cast(s, x, DataType::kFloat)), DataType::kDouble);
  };
  check_tensor<double>(gradient_of(square_in_float, Tensor::from_vector<double>({1.5, -2, 0.25}),
                                   Tensor::from_vector<double>({1, 1, 2})),
                       TensorShape{3}, {3, -4, 1}, 1e-6);
  // Through float32 with a step large enough for float32's precision: the round trip is the
  // identity and Square a quadratic, so central differences stay exact up to rounding.
  const CheckOptions coarse = {.low = 0.5, .high = 2, .eps = 1e-2, .tolerance = 1e-4};
  check_gradient(
      [](const Scope& s, const std::vector<Output>& in) {
        return ops::Cast(s, ops::Cast(s, in[0], DataType::kFloat), DataType::kDouble);
      },
      {TensorShape{2, 3}}, coarse);
  check_gradient(
      [](const Scope& s, const std::vector<Output>& in) {
        return ops::Cast(s, ops::Square(s, ops::Cast(s, in[0], DataType::kFloat)),
                         DataType::kDouble);
      },
      {TensorShape{2, 3}}, coarse);
  // A float64 -> float64 cast is the identity.
  check_gradient(
      [](const Scope& s, const std::vector<Output>& in) {
        return ops::Cast(s, in[0], DataType::kDouble);
      },
      {TensorShape{2, 2}});
}

BOOST_AUTO_TEST_CASE(bias_add_and_activations) {
  check_gradient(binary(ops::BiasAdd), {TensorShape{3, 4}, TensorShape{4}});
  check_gradient(binary(ops::BiasAdd), {TensorShape{2, 3, 2}, TensorShape{2}});
  check_gradient(binary(ops::BiasAdd), {TensorShape{3, 4}, TensorShape{4}},
                 {.shapes = Shapes::kUnknownRank});
  check_gradient(unary(ops::Relu), {TensorShape{3, 4}});
  check_gradient(unary(ops::Sigmoid), {TensorShape{3, 4}}, {.low = -3, .high = 3});
  check_gradient(unary(ops::Tanh), {TensorShape{3, 4}}, {.low = -2, .high = 2});
}

BOOST_AUTO_TEST_CASE(relu_gradient_is_zero_where_the_input_is_negative) {
  auto relu = [](const Scope& s, const Output& x) { return ops::Relu(s, x); };
  check_tensor<double>(gradient_of(relu, Tensor::from_vector<double>({-1, 2, -0.5, 3}),
                                   Tensor::from_vector<double>({5, 6, 7, 8})),
                       TensorShape{4}, {0, 6, 0, 8}, 0);
}

BOOST_AUTO_TEST_CASE(softmax) {
  check_gradient(unary(ops::Softmax), {TensorShape{3, 4}}, {.low = -2, .high = 2});
  check_gradient(unary(ops::Softmax), {TensorShape{2, 2, 3}}, {.low = -2, .high = 2});
  check_gradient(unary(ops::Softmax), {TensorShape{5}}, {.shapes = Shapes::kUnknownRank});
}

BOOST_AUTO_TEST_CASE(sparse_softmax_cross_entropy) {
  for (DataType label_type : {DataType::kInt64, DataType::kInt32}) {
    const Tensor labels = Tensor::from_vector<int64_t>({2, 0, 3}).cast_to(label_type).value();
    auto loss = [labels](const Scope& s, const std::vector<Output>& in) {
      return ops::SparseSoftmaxCrossEntropyWithLogits(s, in[0], labels).loss;
    };
    check_gradient(loss, {TensorShape{3, 4}}, {.low = -2, .high = 2});
    check_gradient(loss, {TensorShape{3, 4}},
                   {.low = -2, .high = 2, .shapes = Shapes::kUnknownRank});
  }
  // The gradient with respect to the features is backprop scaled by each row's loss gradient.
  Scope s = Scope::new_root();
  auto features = ops::Placeholder(s, DataType::kDouble);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, features, {int64_t{1}, int64_t{0}});
  auto loss = ops::Sum(s, ops::Mul(s, xent.loss, {3.0, -1.0}), 0);
  auto grads = add_gradients(s, {loss}, {features});
  BOOST_REQUIRE(grads.ok());
  const Tensor f = value_or_throw(Tensor::from_vector<double>({0, 0, std::log(3.0), 0}, {2, 2}));
  // Row 0: softmax [1/2, 1/2], label 1 -> backprop [1/2, -1/2], times 3.
  // Row 1: softmax [3/4, 1/4], label 0 -> backprop [-1/4, 1/4], times -1.
  check_tensor<double>(run_one(s, grads->at(0), {{features, f}}), TensorShape{2, 2},
                       {1.5, -1.5, 0.25, -0.25}, 1e-12);
}

BOOST_AUTO_TEST_CASE(sparse_softmax_cross_entropy_through_backprop) {
  // A loss that uses the backprop output too: its gradient adds softmax's.
  auto both = [](const Scope& s, const std::vector<Output>& in) {
    auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, in[0], {int64_t{1}, int64_t{3}});
    return ops::Add(s, ops::Reshape(s, xent.loss, {2, 1}), ops::Square(s, xent.backprop));
  };
  check_gradient(both, {TensorShape{2, 4}}, {.low = -2, .high = 2});
  auto backprop_only = [](const Scope& s, const std::vector<Output>& in) {
    return ops::SparseSoftmaxCrossEntropyWithLogits(s, in[0], {0, 2}).backprop;
  };
  check_gradient(backprop_only, {TensorShape{2, 3}}, {.low = -2, .high = 2});
}

BOOST_AUTO_TEST_CASE(two_layer_mlp) {
  // loss = mean(xent(relu(x W1 + b1) W2 + b2, labels)) with respect to x, W1, b1, W2, b2.
  auto mlp = [](const Scope& s, const std::vector<Output>& in) {
    auto hidden = ops::Relu(s, ops::BiasAdd(s, ops::MatMul(s, in[0], in[1]), in[2]));
    auto logits = ops::BiasAdd(s, ops::MatMul(s, hidden, in[3]), in[4]);
    auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(
        s, logits, {int64_t{0}, int64_t{2}, int64_t{1}, int64_t{2}});
    return ops::Mean(s, xent.loss, 0);
  };
  const std::vector<TensorShape> shapes = {TensorShape{4, 3}, TensorShape{3, 5}, TensorShape{5},
                                           TensorShape{5, 3}, TensorShape{3}};
  check_gradient(mlp, shapes);
  check_gradient(mlp, shapes, {.seed = 99, .shapes = Shapes::kUnknownDims});
  // The same net with a tanh layer and a sigmoid layer, batch dimension unknown.
  auto smooth = [](const Scope& s, const std::vector<Output>& in) {
    auto h1 = ops::Tanh(s, ops::BiasAdd(s, ops::MatMul(s, in[0], in[1]), in[2]));
    auto h2 = ops::Sigmoid(s, ops::MatMul(s, h1, in[3], {.transpose_b = true}));
    return ops::Mean(s, ops::Square(s, ops::Sub(s, h2, 0.5)), {0, 1});
  };
  check_gradient(smooth, {TensorShape{4, 3}, TensorShape{3, 5}, TensorShape{5}, TensorShape{2, 5}},
                 {.seed = 5, .shapes = Shapes::kUnknownDims});
}

BOOST_AUTO_TEST_CASE(second_order_through_the_fused_ops) {
  // The fused backward ops are differentiable themselves.
  check_gradient(binary(ops::ReluGrad), {TensorShape{2, 3}, TensorShape{2, 3}});
  check_gradient(binary(ops::SigmoidGrad), {TensorShape{2, 3}, TensorShape{2, 3}});
  check_gradient(binary(ops::TanhGrad), {TensorShape{2, 3}, TensorShape{2, 3}});
  check_gradient(unary(ops::BiasAddGrad), {TensorShape{4, 3}});
  // d/dx of sum(w * d(sum(tanh(x) * v))/dx), built by differentiating a gradient.
  auto grad_of_tanh = [](const Scope& s, const std::vector<Output>& in) {
    auto inner = ops::Sum(s, ops::Mul(s, ops::Tanh(s, in[0]), in[1]), {0, 1});
    auto g = add_gradients(s, {inner}, {in[0]});
    BOOST_REQUIRE(g.ok());
    return g->at(0);
  };
  check_gradient(grad_of_tanh, {TensorShape{2, 2}, TensorShape{2, 2}});
}

BOOST_AUTO_TEST_CASE(grad_ys_weight_the_ys) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kDouble);
  auto y1 = ops::Square(s, x);
  auto y2 = ops::Mul(s, x, 3.0);
  auto grads =
      add_gradients(s, {y1, y2}, {x}, {ops::Const(s, {1.0, 10.0}), ops::Const(s, {100.0, 1000.0})});
  BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
  // 2x * [1, 10] + 3 * [100, 1000] at x = [1, 2].
  check_tensor<double>(run_one(s, grads->at(0), {{x, Tensor::from_vector<double>({1, 2})}}),
                       TensorShape{2}, {302, 3040}, 1e-12);
  // Without grad_ys: ones.
  auto plain = add_gradients(s, {y1, y2}, {x});
  BOOST_REQUIRE(plain.ok());
  check_tensor<double>(run_one(s, plain->at(0), {{x, Tensor::from_vector<double>({1, 2})}}),
                       TensorShape{2}, {5, 7}, 1e-12);
}

// A grad_ys whose shape is known only when the step runs is checked then: Add's gradient
// (same static input shapes, so no reduction) used to pass on a gradient of the wrong shape.
BOOST_AUTO_TEST_CASE(grad_ys_of_the_wrong_shape_fail_when_running) {
  Scope s = Scope::new_root();
  auto a = ops::Placeholder(s, DataType::kFloat, PartialShape({2}));
  auto b = ops::Placeholder(s, DataType::kFloat, PartialShape({2}));
  auto y = ops::Add(s, a, b);
  auto dy = ops::Placeholder(s, DataType::kFloat);  // shape unknown until fed
  auto grads = add_gradients(s, {y}, {a}, {dy});
  BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
  std::vector<Feed> feeds = {{a, Tensor::from_vector<float>({1, 2})},
                             {b, Tensor::from_vector<float>({3, 4})},
                             {dy, Tensor::from_vector<float>({5, 6})}};
  check_tensor<float>(run_one(s, grads->at(0), feeds), TensorShape{2}, {5, 6});
  feeds.back() = {dy, Tensor::from_vector<float>({5, 6, 7})};
  auto wrong = run_graph(s, {grads->at(0)}, feeds);
  BOOST_REQUIRE(!wrong.ok());
  BOOST_TEST(wrong.status().code() == Code::kInvalidArgument, wrong.status().to_string());
  BOOST_TEST(wrong.status().message().find(
                 "input has shape [3] but must have the shape of 'like', [2]") != std::string::npos,
             wrong.status().to_string());
}

BOOST_AUTO_TEST_CASE(an_x_upstream_of_another_x) {
  // xs = {h, x} with h = x^2 and y = 3h: dy/dh = 3, dy/dx = 6x (through h).
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kDouble);
  auto h = ops::Square(s, x);
  auto y = ops::Mul(s, h, 3.0);
  auto grads = add_gradients(s, {y}, {h, x});
  BOOST_REQUIRE(grads.ok());
  auto values = run_graph(s, *grads, {{x, Tensor::from_vector<double>({1, -2})}});
  BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
  check_tensor<double>(values->at(0), TensorShape{2}, {3, 3}, 1e-12);
  check_tensor<double>(values->at(1), TensorShape{2}, {6, -12}, 1e-12);
}

BOOST_AUTO_TEST_CASE(gradient_with_respect_to_a_variable) {
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 2);
  Scope s = Scope::new_root();
  auto w = ops::Variable(s, {2, 2}, DataType::kDouble);
  auto init = ops::Assign(s, w, ops::Const(s, {{1.0, -2.0}, {3.0, 0.5}}));
  auto x = ops::Const(s, {{1.0, 2.0}});
  // loss = sum((x w)^2) + sum(w * w): d/dw = 2 xᵀ(x w) + 2w.
  auto loss = ops::Add(s, ops::Sum(s, ops::Square(s, ops::MatMul(s, x, w)), {0, 1}),
                       ops::Sum(s, ops::Mul(s, w, w), {0, 1}));
  auto grads = add_gradients(s, {loss}, {w});
  BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
  BOOST_REQUIRE(grads->at(0).valid());
  BOOST_TEST(dtype_name(grads->at(0).dtype()) == "float64");
  BOOST_REQUIRE(run_graph(s, {}, {}, {init.op()}, &device).ok());
  auto value = run_graph(s, {grads->at(0)}, {}, {}, &device);
  BOOST_REQUIRE_MESSAGE(value.ok(), value.status().to_string());
  // x w = [7, -1]; 2 xᵀ [7, -1] = [[14, -2], [28, -4]]; plus 2w.
  check_tensor<double>(value->at(0), TensorShape{2, 2}, {16, -6, 34, -3}, 1e-12);
}

BOOST_AUTO_TEST_CASE(gather_with_duplicate_ids_along_each_axis) {
  // Along axis 0 the gradient is IndexedSlices, densified by add_gradients.
  auto rows = [](const Scope& s, const std::vector<Output>& in) {
    return ops::GatherV2(s, in[0], Tensor::from_vector<int32_t>({2, 0, 2, 3}), int32_t{0});
  };
  check_gradient(rows, {TensorShape{4, 3}});
  check_gradient(rows, {TensorShape{4, 3}}, {.shapes = Shapes::kUnknownDims});
  auto nested = [](const Scope& s, const std::vector<Output>& in) {
    return ops::GatherV2(s, in[0], Tensor::from_vector<int64_t>({1, 1}).reshaped({2, 1}).value(),
                         int32_t{0});
  };
  check_gradient(nested, {TensorShape{2, 2, 2}});
  auto columns = [](const Scope& s, const std::vector<Output>& in) {
    return ops::GatherV2(s, in[0], Tensor::from_vector<int32_t>({1, 1, 0}), int32_t{1});
  };
  check_gradient(columns, {TensorShape{2, 3}});
  auto through_identity = [](const Scope& s, const std::vector<Output>& in) {
    auto table = ops::Identity(s, in[0]);
    return ops::Add(s, ops::GatherV2(s, table, Tensor::from_vector<int32_t>({1, 1}), int32_t{0}),
                    ops::GatherV2(s, table, Tensor::from_vector<int32_t>({0, 1}), int32_t{0}));
  };
  check_gradient(through_identity, {TensorShape{3, 2}});
}

BOOST_AUTO_TEST_CASE(unsorted_segment_sum_dynamic_partition_and_stitch) {
  auto segments = [](const Scope& s, const std::vector<Output>& in) {
    return ops::UnsortedSegmentSum(s, in[0], Tensor::from_vector<int32_t>({2, -1, 0, 2}),
                                   int32_t{3});
  };
  check_gradient(segments, {TensorShape{4, 2}});
  auto partition = [](const Scope& s, const std::vector<Output>& in) {
    auto parts = ops::DynamicPartition(s, in[0], Tensor::from_vector<int32_t>({1, 0, 1, 1}), 2);
    return ops::ConcatV2(s, {ops::Mul(s, parts[0], 3.0), parts[1]}, int32_t{0});
  };
  check_gradient(partition, {TensorShape{4, 2}});
  auto stitch = [](const Scope& s, const std::vector<Output>& in) {
    return ops::DynamicStitch(
        s, {Tensor::from_vector<int32_t>({0, 3}), Tensor::from_vector<int32_t>({1, 2, 4})},
        {in[0], in[1]});
  };
  check_gradient(stitch, {TensorShape{2, 2}, TensorShape{3, 2}});
}

BOOST_AUTO_TEST_CASE(reverse_sequence) {
  check_gradient(
      [](const Scope& s, const std::vector<Output>& in) {
        return ops::ReverseSequence(s, in[0], Tensor::from_vector<int64_t>({3, 0, 1}), 1, 0);
      },
      {TensorShape{3, 4, 2}});
}

BOOST_AUTO_TEST_CASE(sorted_and_unsorted_segment_reductions) {
  const Tensor sorted = Tensor::from_vector<int32_t>({0, 0, 0, 2, 3});  // segment 1 empty
  for (const char* reduction : {"Sum", "Mean", "Prod", "Min", "Max"}) {
    BOOST_TEST_CONTEXT(reduction) {
      check_gradient(
          [&](const Scope& s, const std::vector<Output>& in) {
            return ops::SegmentReduction(s, reduction, in[0], sorted);
          },
          {TensorShape{5, 2}});
    }
  }
  const Tensor unsorted =
      Tensor::from_vector<int64_t>({2, -1, 0, 2, 0, 1}, TensorShape{3, 2}).value();
  for (const char* reduction : {"Prod", "Min", "Max"}) {
    BOOST_TEST_CONTEXT(reduction) {
      check_gradient(
          [&](const Scope& s, const std::vector<Output>& in) {
            // Every segment has slices: an empty one's huge identity has no finite difference.
            return ops::UnsortedSegmentReduction(s, reduction, in[0], unsorted, int32_t{3});
          },
          {TensorShape{3, 2, 2}}, {.shapes = Shapes::kUnknownRank});
    }
  }
}

BOOST_AUTO_TEST_CASE(sparse_segments_gather_nd_scatter_nd_and_sparse_to_dense) {
  const Tensor indices = Tensor::from_vector<int32_t>({3, 0, 3, 1});  // row 3 twice, row 2 never
  const Tensor ids = Tensor::from_vector<int32_t>({0, 0, 2, 2});      // segment 1 empty
  for (const char* reduction : {"Sum", "Mean", "SqrtN"}) {
    BOOST_TEST_CONTEXT(reduction) {
      check_gradient(
          [&](const Scope& s, const std::vector<Output>& in) {
            return ops::SparseSegmentReduction(s, reduction, in[0], indices, ids);
          },
          {TensorShape{4, 2}});
      check_gradient(
          [&](const Scope& s, const std::vector<Output>& in) {
            return ops::SparseSegmentReductionWithNumSegments(s, reduction, in[0], indices, ids,
                                                              int32_t{5});
          },
          {TensorShape{4, 3}}, {.shapes = Shapes::kUnknownDims});
    }
  }
  const Tensor elements =
      Tensor::from_vector<int64_t>({2, 1, 0, 0, 2, 1}, TensorShape{3, 2}).value();
  const Tensor rows = Tensor::from_vector<int32_t>({2, 0, 2}, TensorShape{3, 1}).value();
  for (const Tensor& at : {elements, rows}) {
    check_gradient(
        [&](const Scope& s, const std::vector<Output>& in) { return ops::GatherNd(s, in[0], at); },
        {TensorShape{3, 2}});
  }
  check_gradient(
      [&](const Scope& s, const std::vector<Output>& in) {
        return ops::ScatterNd(s, elements, in[0], Tensor::from_vector<int64_t>({3, 2}));
      },
      {TensorShape{3}});
  const Tensor distinct = Tensor::from_vector<int64_t>({2, 1, 0, 0}, TensorShape{2, 2}).value();
  for (const char* kind : {"Update", "Add", "Sub"}) {
    BOOST_TEST_CONTEXT(kind) {
      check_gradient(
          [&](const Scope& s, const std::vector<Output>& in) {
            return ops::TensorScatter(s, kind, in[0], distinct, in[1]);
          },
          {TensorShape{3, 2}, TensorShape{2}});
    }
  }
  // SparseToDense: a value per index, or one value for all, and the default elsewhere.
  check_gradient(
      [&](const Scope& s, const std::vector<Output>& in) {
        const Tensor sorted = Tensor::from_vector<int64_t>({0, 0, 2, 1}, TensorShape{2, 2}).value();
        return ops::SparseToDense(s, sorted, Tensor::from_vector<int64_t>({3, 2}), in[0], in[1]);
      },
      {TensorShape{2}, TensorShape{}});
  check_gradient(
      [&](const Scope& s, const std::vector<Output>& in) {
        return ops::SparseToDense(s, Tensor::from_vector<int32_t>({1, 3}),
                                  Tensor::from_vector<int32_t>({5}), in[0], in[1]);
      },
      {TensorShape{}, TensorShape{}});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
