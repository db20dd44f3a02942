// Builders for math ops: element-wise arithmetic (numpy broadcasting), MatMul, reductions,
// casts and comparisons.
#pragma once

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

Output Add(const Scope& scope, const Input& x, const Input& y);
Output Sub(const Scope& scope, const Input& x, const Input& y);
Output Mul(const Scope& scope, const Input& x, const Input& y);
// Integer division truncates toward zero, as in C++; dividing an integer by zero is an error.
Output Div(const Scope& scope, const Input& x, const Input& y);
Output Maximum(const Scope& scope, const Input& x, const Input& y);
Output Minimum(const Scope& scope, const Input& x, const Input& y);
// x^y, floating point only (std::pow's IEEE results: a negative x to a fractional y is NaN).
Output Pow(const Scope& scope, const Input& x, const Input& y);
// (x - y)^2.
Output SquaredDifference(const Scope& scope, const Input& x, const Input& y);
Output Equal(const Scope& scope, const Input& x, const Input& y);     // bool
Output NotEqual(const Scope& scope, const Input& x, const Input& y);  // bool
// Comparisons of numbers (bool results, numpy broadcasting); NaN compares false.
Output Less(const Scope& scope, const Input& x, const Input& y);
Output LessEqual(const Scope& scope, const Input& x, const Input& y);
Output Greater(const Scope& scope, const Input& x, const Input& y);
Output GreaterEqual(const Scope& scope, const Input& x, const Input& y);

Output Neg(const Scope& scope, const Input& x);
Output Square(const Scope& scope, const Input& x);
Output Sqrt(const Scope& scope, const Input& x);
Output Exp(const Scope& scope, const Input& x);
Output Log(const Scope& scope, const Input& x);
Output Abs(const Scope& scope, const Input& x);
Output Sign(const Scope& scope, const Input& x);  // -1, 0 or 1 (NaN stays NaN)
// Floating point only:
Output Rsqrt(const Scope& scope, const Input& x);       // 1 / sqrt(x)
Output Reciprocal(const Scope& scope, const Input& x);  // 1 / x
Output Expm1(const Scope& scope, const Input& x);       // e^x - 1, exact near 0
Output Log1p(const Scope& scope, const Input& x);       // log(1 + x), exact near 0
Output Floor(const Scope& scope, const Input& x);
Output Ceil(const Scope& scope, const Input& x);
Output Round(const Scope& scope, const Input& x);  // halves to even, as TensorFlow's
Output Cos(const Scope& scope, const Input& x);
Output Sin(const Scope& scope, const Input& x);
Output Tan(const Scope& scope, const Input& x);
Output Asin(const Scope& scope, const Input& x);  // NaN outside [-1, 1]
Output Acos(const Scope& scope, const Input& x);  // NaN outside [-1, 1]
Output Atan(const Scope& scope, const Input& x);
Output Sinh(const Scope& scope, const Input& x);
Output Cosh(const Scope& scope, const Input& x);
Output Erf(const Scope& scope, const Input& x);
// Bool tensors of x's shape: NaN, +-infinity, neither.
Output IsNan(const Scope& scope, const Input& x);
Output IsInf(const Scope& scope, const Input& x);
Output IsFinite(const Scope& scope, const Input& x);
// The angle of (x, y) in (-pi, pi], element-wise with broadcasting (std::atan2(y, x)).
Output Atan2(const Scope& scope, const Input& y, const Input& x);
// Activations, as TensorFlow's nn ops: min(max(x, 0), 6); x or e^x - 1 (x <= 0); Selu (scaled
// Elu with Klambauer et al.'s constants); log(1 + e^x); x / (1 + |x|).
Output Relu6(const Scope& scope, const Input& x);
Output Elu(const Scope& scope, const Input& x);
Output Selu(const Scope& scope, const Input& x);
Output Softplus(const Scope& scope, const Input& x);
Output Softsign(const Scope& scope, const Input& x);
// Python's // and % (rounded toward negative infinity; the remainder has the divisor's sign);
// an integer divisor of 0 is an error.
Output FloorDiv(const Scope& scope, const Input& x, const Input& y);
Output FloorMod(const Scope& scope, const Input& x, const Input& y);
// Matrix products of [..., rows, inner] by [..., inner, cols] with equal batch dimensions;
// float and double. adj_x/adj_y transpose the last two dimensions first.
Output BatchMatMul(const Scope& scope, const Input& x, const Input& y, bool adj_x = false,
                   bool adj_y = false);
// X with matrix X = rhs (matrix^T X = rhs with adjoint), matrix [..., M, M] triangular: only
// its lower (or upper) triangle is read. rhs [..., M, K], the same batch dimensions. A zero on
// the diagonal fails the run with TensorFlow's "Input matrix is not invertible.".
Output MatrixTriangularSolve(const Scope& scope, const Input& matrix, const Input& rhs,
                             bool lower = true, bool adjoint = false);
// Running sums (products) along `axis`: exclusive leaves each element out of its own, reverse
// runs from the end.
Output Cumsum(const Scope& scope, const Input& x, const Input& axis, bool exclusive = false,
              bool reverse = false);
Output Cumprod(const Scope& scope, const Input& x, const Input& axis, bool exclusive = false,
               bool reverse = false);
struct TopK {
  Output values;   // the k largest of each row (last dimension), largest first
  Output indices;  // int32: where they are in the row (the lower index first among ties)
};
TopK TopKV2(const Scope& scope, const Input& input, const Input& k, bool sorted = true);
Output LogicalAnd(const Scope& scope, const Input& x, const Input& y);  // bools
Output LogicalOr(const Scope& scope, const Input& x, const Input& y);

struct MatMulOptions {
  bool transpose_a = false;
  bool transpose_b = false;
};
Output MatMul(const Scope& scope, const Input& a, const Input& b, MatMulOptions options = {});

// Reductions over `axes` (a scalar or vector of int32/int64; negative counts from the end; an
// empty vector reduces nothing). keep_dims keeps reduced dimensions with size 1.
struct ReduceOptions {
  bool keep_dims = false;
};
Output Sum(const Scope& scope, const Input& input, const Input& axes, ReduceOptions options = {});
Output Mean(const Scope& scope, const Input& input, const Input& axes, ReduceOptions options = {});
Output Min(const Scope& scope, const Input& input, const Input& axes, ReduceOptions options = {});
// The product over `axes` (1 over an empty dimension).
Output Prod(const Scope& scope, const Input& input, const Input& axes, ReduceOptions options = {});
Output Max(const Scope& scope, const Input& input, const Input& axes, ReduceOptions options = {});

Output Cast(const Scope& scope, const Input& x, DataType dtype);
// Index of the largest element along the scalar `axis`.
Output ArgMax(const Scope& scope, const Input& input, const Input& axis,
              DataType output_type = DataType::kInt64);

}  // namespace troupe::ops
