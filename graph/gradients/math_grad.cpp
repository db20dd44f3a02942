// Gradients of the math ops: element-wise arithmetic (numpy broadcasting, so each input's
// gradient is summed back to that input's shape), unary functions, MatMul, the reductions,
// Cast, AddN and the fused SigmoidGrad / TanhGrad; and the math ops without a gradient (Equal,
// ArgMax, Floor, Ceil, Round). The formulas are TensorFlow's (python/ops/math_grad.py).
#include <optional>

#include "troupe/graph/gradients/standard_gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using Outputs = std::vector<Output>;

// Sets the gradients of a broadcasting binary op on x and y from gx and gy, the gradients with
// respect to each side taken at the broadcast result's shape: each is summed over the axes where
// its side was broadcast (BroadcastGradientArgs on the run-time shapes, so unknown shapes work)
// and reshaped to that side's shape. An invalid gx or gy stays invalid (no gradient).
Status binary_grad(const Scope& s, const Operation& op, Output gx, Output gy, Outputs* dx) {
  const Output x = op_input(op, 0), y = op_input(op, 1);
  if (x.shape().is_fully_defined() && x.shape() == y.shape()) {
    *dx = {gx, gy};  // no broadcasting: nothing to reduce
    return s.status();
  }
  const Output sx = shape_of(s, x), sy = shape_of(s, y);
  const auto r = ops::BroadcastGradientArgs(s, sx, sy);
  *dx = {gx.valid() ? ops::Reshape(s, ops::Sum(s, gx, r.r0), sx) : Output(),
         gy.valid() ? ops::Reshape(s, ops::Sum(s, gy, r.r1), sy) : Output()};
  return s.status();
}

Status add_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  return binary_grad(s, op, dy[0], dy[0], dx);
}

Status sub_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  return binary_grad(s, op, dy[0], ops::Neg(s, dy[0]), dx);
}

// d(x*y) = dy*y, x*dy.
Status mul_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), y = op_input(op, 1);
  return binary_grad(s, op, ops::Mul(s, dy[0], y), ops::Mul(s, x, dy[0]), dx);
}

// d(x/y) = dy/y, dy * (-x/y)/y.
Status div_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), y = op_input(op, 1);
  return binary_grad(s, op, ops::Div(s, dy[0], y),
                     ops::Mul(s, dy[0], ops::Div(s, ops::Div(s, ops::Neg(s, x), y), y)), dx);
}

// The gradient goes to the input Maximum selected: x where x >= y (ties go to x), else y. The
// kernel returns x exactly where x >= y (NaN on either side selects y, as x >= y is then false),
// so "z == x" is that mask. Computed as dy * mask and dy - dy * mask, which equals TensorFlow's
// select for a finite dy.
Status maximum_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), z(op, 0);
  const Output mask = ops::Cast(s, ops::Equal(s, z, x), x.dtype());
  const Output gx = ops::Mul(s, dy[0], mask);
  return binary_grad(s, op, gx, ops::Sub(s, dy[0], gx), dx);
}

// As Maximum: the gradient goes to whichever input the output came from (x on ties).
Status minimum_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  return maximum_grad(s, op, dy, dx);
}

// d(x^y) = dy * y * x^(y-1), dy * x^y * log(x) where x > 0 (0 elsewhere, as TensorFlow: the
// real logarithm is undefined there).
Status pow_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), y = op_input(op, 1), z(op, 0);
  const Output gx = ops::Mul(s, ops::Mul(s, dy[0], y), ops::Pow(s, x, ops::Sub(s, y, 1.0)));
  const Output positive = ops::Greater(s, x, ops::ZerosLike(s, x));
  const Output safe_x = ops::Select(s, positive, x, ops::OnesLike(s, x));
  const Output log_x = ops::Select(s, positive, ops::Log(s, safe_x), ops::ZerosLike(s, x));
  return binary_grad(s, op, gx, ops::Mul(s, ops::Mul(s, dy[0], z), log_x), dx);
}

// d((x-y)^2) = dy * 2(x-y), -dy * 2(x-y).
Status squared_difference_grad(const Scope& s, const Operation& op, const Outputs& dy,
                               Outputs* dx) {
  const Output x = op_input(op, 0), y = op_input(op, 1);
  const Output gx = ops::Mul(s, dy[0], ops::Mul(s, ops::Sub(s, x, y), 2.0));
  return binary_grad(s, op, gx, ops::Neg(s, gx), dx);
}

// d|x| = dy * sign(x).
Status abs_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Mul(s, dy[0], ops::Sign(s, op_input(op, 0)))};
  return s.status();
}

// sign, piecewise constant: zero (TensorFlow returns zeros, not None).
Status sign_grad(const Scope& s, const Operation& op, const Outputs&, Outputs* dx) {
  *dx = {ops::ZerosLike(s, op_input(op, 0))};
  return s.status();
}

// d(x^-1/2) = dy * -0.5 * y^3, with y = x^-1/2.
Status rsqrt_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output y(op, 0);
  *dx = {ops::Mul(s, ops::Mul(s, dy[0], -0.5), ops::Mul(s, y, ops::Square(s, y)))};
  return s.status();
}

// d(1/x) = -dy * y^2, with y = 1/x.
Status reciprocal_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Neg(s, ops::Mul(s, dy[0], ops::Square(s, Output(op, 0))))};
  return s.status();
}

// d(e^x - 1) = dy * e^x.
Status expm1_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Mul(s, dy[0], ops::Exp(s, op_input(op, 0)))};
  return s.status();
}

// d(log(1 + x)) = dy / (1 + x).
Status log1p_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Div(s, dy[0], ops::Add(s, op_input(op, 0), 1.0))};
  return s.status();
}

// d(erf x) = dy * 2 / sqrt(pi) * e^(-x^2).
Status erf_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0);
  *dx = {ops::Mul(s, ops::Mul(s, dy[0], 1.1283791670955126),
                  ops::Exp(s, ops::Neg(s, ops::Square(s, x))))};
  return s.status();
}

// dy where 0 < x < 6, else 0.
Status relu6_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0);
  const Output inside = ops::LogicalAnd(s, ops::Greater(s, x, 0.0), ops::Less(s, x, 6.0));
  *dx = {ops::Select(s, inside, dy[0], ops::ZerosLike(s, dy[0]))};
  return s.status();
}

// dy for x > 0, else dy * (y + 1) (= dy * e^x).
Status elu_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), y(op, 0);
  *dx = {ops::Select(s, ops::Greater(s, x, 0.0), dy[0], ops::Mul(s, dy[0], ops::Add(s, y, 1.0)))};
  return s.status();
}

// scale * dy for x > 0, else dy * (y + scale * alpha).
Status selu_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), y(op, 0);
  constexpr double kScale = 1.0507009873554804934193349852946;
  constexpr double kScaleAlpha = kScale * 1.6732632423543772848170429916717;
  *dx = {ops::Select(s, ops::Greater(s, x, 0.0), ops::Mul(s, dy[0], kScale),
                     ops::Mul(s, dy[0], ops::Add(s, y, kScaleAlpha)))};
  return s.status();
}

// d(log(1 + e^x)) = dy * sigmoid(x).
Status softplus_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Mul(s, dy[0], ops::Sigmoid(s, op_input(op, 0)))};
  return s.status();
}

// d(x / (1 + |x|)) = dy / (1 + |x|)^2.
Status softsign_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Div(s, dy[0], ops::Square(s, ops::Add(s, ops::Abs(s, op_input(op, 0)), 1.0)))};
  return s.status();
}

// x mod y = x - floor(x / y) * y: dx = dy, dy_y = -dy * floor(x / y), each summed to its shape.
Status floor_mod_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), y = op_input(op, 1);
  return binary_grad(s, op, dy[0], ops::Mul(s, ops::Neg(s, dy[0]), ops::FloorDiv(s, x, y)), dx);
}

// TensorFlow's four cases of adj_x and adj_y.
Status batch_matmul_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), y = op_input(op, 1), g = dy[0];
  const bool ax = op_attr<bool>(op, "adj_x"), ay = op_attr<bool>(op, "adj_y");
  if (!ax && !ay) {
    *dx = {ops::BatchMatMul(s, g, y, false, true), ops::BatchMatMul(s, x, g, true, false)};
  } else if (!ax && ay) {
    *dx = {ops::BatchMatMul(s, g, y, false, false), ops::BatchMatMul(s, g, x, true, false)};
  } else if (ax && !ay) {
    *dx = {ops::BatchMatMul(s, y, g, false, true), ops::BatchMatMul(s, x, g, false, false)};
  } else {
    *dx = {ops::BatchMatMul(s, y, g, true, true), ops::BatchMatMul(s, g, x, true, true)};
  }
  return s.status();
}

// A running sum's gradient: the running sum of dy the other way (TensorFlow's _CumsumGrad).
Status cumsum_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Cumsum(s, dy[0], op_input(op, 1), op_attr<bool>(op, "exclusive"),
                     !op_attr<bool>(op, "reverse")),
         Output()};
  return s.status();
}

// TensorFlow's _CumprodGrad: cumsum(y * dy) the other way, divided by x (undefined where x is
// 0, as there).
Status cumprod_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), axis = op_input(op, 1), y(op, 0);
  const bool exclusive = op_attr<bool>(op, "exclusive"), reverse = op_attr<bool>(op, "reverse");
  const Output summed = ops::Cumsum(s, ops::Mul(s, y, dy[0]), axis, exclusive, !reverse);
  *dx = {ops::Div(s, summed, x), Output()};
  return s.status();
}

// Each value's gradient goes back to where it came from: dy's rows summed into zeros of the
// input's shape at row * n + index (indices get none).
Status top_k_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output input = op_input(op, 0), indices(op, 1);
  const Output input_shape = shape_of(s, input);
  const Output n = ops::StridedSlice(s, input_shape, {int32_t{-1}}, {int32_t{0}}, {int32_t{1}},
                                     {.end_mask = 1, .shrink_axis_mask = 1});
  const Output k = ops::StridedSlice(s, ops::Shape(s, indices), {int32_t{-1}}, {int32_t{0}},
                                     {int32_t{1}}, {.end_mask = 1, .shrink_axis_mask = 1});
  const Output rows = ops::Div(s, ops::Size(s, input), ops::Maximum(s, n, int32_t{1}));
  const Output flat_indices = ops::Add(
      s, ops::Reshape(s, indices, {int32_t{-1}, int32_t{1}}),
      ops::Reshape(
          s,
          ops::Tile(s,
                    ops::Reshape(s, ops::Mul(s, ops::Range(s, int32_t{0}, rows, int32_t{1}), n),
                                 {int32_t{-1}, int32_t{1}}),
                    ops::Pack(s, {int32_t{1}, k})),
          {int32_t{-1}, int32_t{1}}));
  const Output summed =
      ops::UnsortedSegmentSum(s, ops::Reshape(s, dy[0], {int32_t{-1}}),
                              ops::Reshape(s, flat_indices, {int32_t{-1}}), ops::Size(s, input));
  *dx = {ops::Reshape(s, summed, input_shape), Output()};
  return s.status();
}

// d(cos x) = -dy * sin x.
Status cos_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Neg(s, ops::Mul(s, dy[0], ops::Sin(s, op_input(op, 0))))};
  return s.status();
}

// d(sin x) = dy * cos x.
Status sin_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Mul(s, dy[0], ops::Cos(s, op_input(op, 0)))};
  return s.status();
}

// d(tan x) = dy / cos^2 x.
Status tan_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Div(s, dy[0], ops::Square(s, ops::Cos(s, op_input(op, 0))))};
  return s.status();
}

// d(asin x) = dy / sqrt(1 - x^2); d(acos x) is its negative.
Status asin_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0);
  *dx = {ops::Mul(s, dy[0], ops::Rsqrt(s, ops::Sub(s, ops::OnesLike(s, x), ops::Square(s, x))))};
  return s.status();
}
Status acos_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  TROUPE_RETURN_IF_ERROR(asin_grad(s, op, dy, dx));
  (*dx)[0] = ops::Neg(s, (*dx)[0]);
  return s.status();
}

// d(atan x) = dy / (1 + x^2).
Status atan_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0);
  *dx = {ops::Div(s, dy[0], ops::Add(s, ops::OnesLike(s, x), ops::Square(s, x)))};
  return s.status();
}

// d(sinh x) = dy * cosh x; d(cosh x) = dy * sinh x.
Status sinh_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Mul(s, dy[0], ops::Cosh(s, op_input(op, 0)))};
  return s.status();
}
Status cosh_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Mul(s, dy[0], ops::Sinh(s, op_input(op, 0)))};
  return s.status();
}

// d(atan2(y, x)) = dy * x / (x^2 + y^2) for y, -dy * y / (x^2 + y^2) for x.
Status atan2_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output y = op_input(op, 0), x = op_input(op, 1);
  const Output scaled = ops::Div(s, dy[0], ops::Add(s, ops::Square(s, x), ops::Square(s, y)));
  return binary_grad(s, op, ops::Mul(s, scaled, x), ops::Neg(s, ops::Mul(s, scaled, y)), dx);
}

Status neg_grad(const Scope& s, const Operation&, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Neg(s, dy[0])};
  return s.status();
}

// d(x^2) = dy * 2x.
Status square_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Mul(s, dy[0], ops::Mul(s, op_input(op, 0), 2.0))};
  return s.status();
}

// d(sqrt x) = dy * 0.5 / y, with y = sqrt(x).
Status sqrt_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Div(s, ops::Mul(s, dy[0], 0.5), Output(op, 0))};
  return s.status();
}

// d(e^x) = dy * y, with y = e^x.
Status exp_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Mul(s, dy[0], Output(op, 0))};
  return s.status();
}

// d(log x) = dy / x.
Status log_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Div(s, dy[0], op_input(op, 0))};
  return s.status();
}

// For product = op(a) op(b), with op a transpose or not, and g = d(product):
//   a·b:   da = g·bᵀ,    db = aᵀ·g
//   aᵀ·b:  da = b·gᵀ,    db = a·g
//   a·bᵀ:  da = g·b,     db = gᵀ·a
//   aᵀ·bᵀ: da = bᵀ·gᵀ,   db = gᵀ·aᵀ
Status matmul_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output a = op_input(op, 0), b = op_input(op, 1), g = dy[0];
  const bool ta = op_attr<bool>(op, "transpose_a"), tb = op_attr<bool>(op, "transpose_b");
  if (!ta && !tb) {
    *dx = {ops::MatMul(s, g, b, {.transpose_b = true}),
           ops::MatMul(s, a, g, {.transpose_a = true})};
  } else if (ta && !tb) {
    *dx = {ops::MatMul(s, b, g, {.transpose_b = true}), ops::MatMul(s, a, g)};
  } else if (!ta && tb) {
    *dx = {ops::MatMul(s, g, b), ops::MatMul(s, g, a, {.transpose_a = true})};
  } else {
    *dx = {ops::MatMul(s, b, g, {.transpose_a = true, .transpose_b = true}),
           ops::MatMul(s, g, a, {.transpose_a = true, .transpose_b = true})};
  }
  return s.status();
}

// The shape (an int32 vector) the output of the reduction `op` has, or would have had with
// keep_dims, where every reduced dimension is kept with size 1. Built from what is known when
// building: a constant when the input's shape and the axes are known, a mask over Shape(input)
// when its rank and the axes are, and otherwise the shape of the reduction redone with
// keep_dims.
Output kept_dims_shape(const Scope& s, const Operation& op) {
  if (op_attr<bool>(op, "keep_dims")) return shape_of(s, Output(op, 0));
  const Output x = op_input(op, 0), axes = op_input(op, 1);
  const PartialShape& in = x.shape();
  const auto axis_values = constant_ints(axes);
  if (!in.rank_known() || !axis_values) {
    return ops::Shape(s, ops::Sum(s, x, axes, {.keep_dims = true}));
  }
  // The axes are in range: the reduction's shape function checked them.
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t axis : *axis_values)
    reduced[axis < 0 ? axis + in.rank() : axis] = true;
  if (in.is_fully_defined()) {
    std::vector<int32_t> dims;
    for (int i = 0; i < in.rank(); ++i)
      dims.push_back(reduced[i] ? 1 : static_cast<int32_t>(in.dim(i)));
    return ops::Const(s, Tensor::from_vector(dims));
  }
  // Shape(x) * keep + (1 - keep), keep being 1 for a kept dimension and 0 for a reduced one.
  std::vector<int32_t> keep, ones_where_reduced;
  for (int i = 0; i < in.rank(); ++i) {
    keep.push_back(reduced[i] ? 0 : 1);
    ones_where_reduced.push_back(reduced[i] ? 1 : 0);
  }
  return ops::Add(s, ops::Mul(s, ops::Shape(s, x), Tensor::from_vector(keep)),
                  Tensor::from_vector(ones_where_reduced));
}

// Every input element contributes once to the output element it was summed into: the output's
// gradient, with the reduced dimensions restored as size 1, broadcast to the input's shape.
Output sum_grad_of(const Scope& s, const Operation& op, const Output& g) {
  const Output x = op_input(op, 0);
  return ops::BroadcastTo(s, ops::Reshape(s, g, kept_dims_shape(s, op)), shape_of(s, x));
}

Status sum_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {sum_grad_of(s, op, dy[0]), Output()};
  return s.status();
}

// Sum's gradient divided by the number of input elements per output element.
Status mean_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), y(op, 0);
  Output scaled;
  if (x.shape().is_fully_defined() && y.shape().is_fully_defined()) {
    const int64_t count = x.shape().num_elements() / std::max<int64_t>(y.shape().num_elements(), 1);
    scaled = ops::Div(s, dy[0], static_cast<double>(count));
  } else {
    // TensorFlow's safe_shape_div: an empty output means an empty input, and no division.
    const Output count = ops::Div(s, ops::Size(s, x), ops::Maximum(s, ops::Size(s, y), int32_t{1}));
    scaled = ops::Div(s, dy[0], ops::Cast(s, count, x.dtype()));
  }
  *dx = {sum_grad_of(s, op, scaled), Output()};
  return s.status();
}

// TensorFlow's _ProdGrad: with the reduced dimensions moved to the front and flattened, each
// element's gradient is the product of all the others in its reduction — the exclusive
// products from the left times those from the right (exact with zeros, no division).
Status prod_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0);
  const auto axes = constant_ints(op_input(op, 1));
  const int rank = x.shape().rank();
  if (!axes || rank < 0) {
    return errors::Unimplemented(
        "node '{}' (Prod): the gradient needs constant axes and an input of known rank", op.name());
  }
  std::vector<bool> is_reduced(rank, false);
  for (int64_t a : *axes)
    is_reduced[a < 0 ? a + rank : a] = true;
  std::vector<int32_t> reduced, other, perm, inverse(rank);
  for (int d = 0; d < rank; ++d)
    (is_reduced[d] ? reduced : other).push_back(d);
  perm = reduced;
  perm.insert(perm.end(), other.begin(), other.end());
  for (int i = 0; i < rank; ++i)
    inverse[perm[i]] = i;
  const Output shape = shape_of(s, x);
  auto count = [&](const std::vector<int32_t>& dims) {
    return ops::Prod(s, ops::GatherV2(s, shape, Tensor::from_vector(dims), int32_t{0}), int32_t{0});
  };
  const Output permuted = ops::Transpose(s, x, Tensor::from_vector(perm));
  const Output matrix = ops::Reshape(s, permuted, ops::Pack(s, {count(reduced), count(other)}));
  const Output left = ops::Cumprod(s, matrix, int32_t{0}, /*exclusive=*/true);
  const Output right = ops::Cumprod(s, matrix, int32_t{0}, /*exclusive=*/true, /*reverse=*/true);
  const Output others = ops::Reshape(s, ops::Mul(s, left, right), ops::Shape(s, permuted));
  *dx = {ops::Mul(s, sum_grad_of(s, op, dy[0]),
                  ops::Transpose(s, others, Tensor::from_vector(inverse))),
         Output()};
  return s.status();
}

// The gradient goes to the input elements equal to the minimum or maximum, split equally among
// ties (as TensorFlow).
Status min_max_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), axes = op_input(op, 1);
  Output y(op, 0), g = dy[0];
  if (!op_attr<bool>(op, "keep_dims")) {
    const Output kept = kept_dims_shape(s, op);
    y = ops::Reshape(s, y, kept);
    g = ops::Reshape(s, g, kept);
  }
  const Output indicators = ops::Cast(s, ops::Equal(s, y, x), x.dtype());
  const Output selected = ops::Sum(s, indicators, axes, {.keep_dims = true});
  *dx = {ops::Mul(s, ops::Div(s, indicators, selected), g), Output()};
  return s.status();
}

// Only between floating-point types: a cast to or from an integer or bool carries no gradient.
Status cast_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const DataType src = op_attr<DataType>(op, "SrcT"), dst = op_attr<DataType>(op, "DstT");
  if (!dtype_is_floating(src) || !dtype_is_floating(dst)) {
    *dx = {Output()};
    return s.status();
  }
  *dx = {ops::Cast(s, dy[0], src)};
  return s.status();
}

// Every input gets the sum's gradient.
Status add_n_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  dx->assign(op.node()->num_inputs(), dy[0]);
  return s.status();
}

// SigmoidGrad(y, dy) = dy * y * (1 - y): d/dy = g * dy * (1 - 2y), d/d(dy) = SigmoidGrad(y, g).
Status sigmoid_grad_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output y = op_input(op, 0), d = op_input(op, 1), g = dy[0];
  const Output gd = ops::Mul(s, g, d);
  *dx = {ops::Sub(s, gd, ops::Mul(s, ops::Mul(s, gd, y), 2.0)), ops::SigmoidGrad(s, y, g)};
  return s.status();
}

// TanhGrad(y, dy) = dy * (1 - y^2): d/dy = -2 * g * dy * y, d/d(dy) = TanhGrad(y, g).
Status tanh_grad_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output y = op_input(op, 0), d = op_input(op, 1), g = dy[0];
  *dx = {ops::Mul(s, ops::Mul(s, ops::Mul(s, g, d), y), -2.0), ops::TanhGrad(s, y, g)};
  return s.status();
}

}  // namespace

void register_math_gradients(GradientRegistry& r) {
  must_register_gradient(r, "Add", add_grad);
  must_register_gradient(r, "Sub", sub_grad);
  must_register_gradient(r, "Mul", mul_grad);
  must_register_gradient(r, "Div", div_grad);
  must_register_gradient(r, "Maximum", maximum_grad);
  must_register_gradient(r, "Minimum", minimum_grad);
  must_register_gradient(r, "Pow", pow_grad);
  must_register_gradient(r, "SquaredDifference", squared_difference_grad);
  must_register_gradient(r, "Abs", abs_grad);
  must_register_gradient(r, "Sign", sign_grad);
  must_register_gradient(r, "Rsqrt", rsqrt_grad);
  must_register_gradient(r, "Reciprocal", reciprocal_grad);
  must_register_gradient(r, "Expm1", expm1_grad);
  must_register_gradient(r, "Log1p", log1p_grad);
  must_register_gradient(r, "Cos", cos_grad);
  must_register_gradient(r, "Erf", erf_grad);
  must_register_gradient(r, "Cumsum", cumsum_grad);
  must_register_gradient(r, "Prod", prod_grad);
  must_register_gradient(r, "Cumprod", cumprod_grad);
  must_register_gradient(r, "TopKV2", top_k_grad);
  must_register_gradient(r, "BatchMatMul", batch_matmul_grad);
  must_register_gradient(r, "Relu6", relu6_grad);
  must_register_gradient(r, "Elu", elu_grad);
  must_register_gradient(r, "Selu", selu_grad);
  must_register_gradient(r, "Softplus", softplus_grad);
  must_register_gradient(r, "Softsign", softsign_grad);
  must_register_gradient(r, "FloorMod", floor_mod_grad);
  for (const char* op : {"FloorDiv", "LogicalAnd", "LogicalOr"})
    must_declare_not_differentiable(r, op);
  must_register_gradient(r, "Sin", sin_grad);
  must_register_gradient(r, "Tan", tan_grad);
  must_register_gradient(r, "Asin", asin_grad);
  must_register_gradient(r, "Acos", acos_grad);
  must_register_gradient(r, "Atan", atan_grad);
  must_register_gradient(r, "Sinh", sinh_grad);
  must_register_gradient(r, "Cosh", cosh_grad);
  must_register_gradient(r, "Atan2", atan2_grad);
  must_register_gradient(r, "Neg", neg_grad);
  must_register_gradient(r, "Square", square_grad);
  must_register_gradient(r, "Sqrt", sqrt_grad);
  must_register_gradient(r, "Exp", exp_grad);
  must_register_gradient(r, "Log", log_grad);
  must_register_gradient(r, "MatMul", matmul_grad);
  must_register_gradient(r, "Sum", sum_grad);
  must_register_gradient(r, "Mean", mean_grad);
  must_register_gradient(r, "Min", min_max_grad);
  must_register_gradient(r, "Max", min_max_grad);
  must_register_gradient(r, "Cast", cast_grad);
  must_register_gradient(r, "AddN", add_n_grad);
  must_register_gradient(r, "SigmoidGrad", sigmoid_grad_grad);
  must_register_gradient(r, "TanhGrad", tanh_grad_grad);
  // Floor, Ceil and Round have no gradient, as in TensorFlow (None, not zeros).
  for (const char* op : {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
                         "ArgMax", "Floor", "Ceil", "Round", "IsNan", "IsInf", "IsFinite"})
    must_declare_not_differentiable(r, op);
}

}  // namespace troupe
