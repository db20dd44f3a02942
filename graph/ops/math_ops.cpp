// Math ops: definitions (dtypes, shape functions) and builders.
#include "troupe/graph/ops/math_ops.hpp"

#include <map>
#include <set>

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

constexpr std::string_view kNumeric = "T: {float32, float64, int32, int64}";
constexpr std::string_view kFloating = "T: {float32, float64}";

Status matmul_shape(InferenceContext& c) {
  const PartialShape& a = c.input(0);
  const PartialShape& b = c.input(1);
  for (int i = 0; i < 2; ++i) {
    if (c.input(i).rank_known() && c.input(i).rank() != 2) {
      return c.invalid("input {} must be a matrix, got shape {}", i, c.input(i).to_string());
    }
  }
  bool ta = c.attr<bool>("transpose_a"), tb = c.attr<bool>("transpose_b");
  int64_t rows = a.rank_known() ? a.dim(ta ? 1 : 0) : -1;
  int64_t inner_a = a.rank_known() ? a.dim(ta ? 0 : 1) : -1;
  int64_t inner_b = b.rank_known() ? b.dim(tb ? 1 : 0) : -1;
  int64_t cols = b.rank_known() ? b.dim(tb ? 0 : 1) : -1;
  if (inner_a >= 0 && inner_b >= 0 && inner_a != inner_b) {
    return c.invalid("inner dimensions differ: {} x {}{}{} (shapes {} and {})", inner_a, inner_b,
                     ta ? " with transpose_a" : "", tb ? " with transpose_b" : "", a.to_string(),
                     b.to_string());
  }
  c.set_output(0, PartialShape({rows, cols}));
  return Status::OK();
}

// Matrices [..., rows, inner] x [..., inner, cols] with equal batch dimensions (TensorFlow 1.x's
// BatchMatMul does not broadcast them); adj_x/adj_y transpose the matrices.
Status batch_matmul_shape(InferenceContext& c) {
  const PartialShape& a = c.input(0);
  const PartialShape& b = c.input(1);
  for (int i = 0; i < 2; ++i) {
    if (c.input(i).rank_known() && c.input(i).rank() < 2) {
      return c.invalid("input {} must have rank >= 2, got shape {}", i, c.input(i).to_string());
    }
  }
  if (!a.rank_known() || !b.rank_known()) return shapes::unknown(c);
  if (a.rank() != b.rank()) {
    return c.invalid("inputs must have the same rank, got shapes {} and {}", a.to_string(),
                     b.to_string());
  }
  const int rank = a.rank();
  std::vector<int64_t> dims;
  for (int d = 0; d + 2 < rank; ++d) {
    const int64_t x = a.dim(d), y = b.dim(d);
    if (x >= 0 && y >= 0 && x != y) {
      return c.invalid("batch dimensions must be equal, got shapes {} and {}", a.to_string(),
                       b.to_string());
    }
    dims.push_back(x >= 0 ? x : y);
  }
  const bool ax = c.attr<bool>("adj_x"), ay = c.attr<bool>("adj_y");
  const int64_t inner_a = a.dim(rank - (ax ? 2 : 1)), inner_b = b.dim(rank - (ay ? 1 : 2));
  if (inner_a >= 0 && inner_b >= 0 && inner_a != inner_b) {
    return c.invalid("inner dimensions differ: {} x {} (shapes {} and {})", inner_a, inner_b,
                     a.to_string(), b.to_string());
  }
  dims.push_back(a.dim(rank - (ax ? 1 : 2)));
  dims.push_back(b.dim(rank - (ay ? 2 : 1)));
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

// Cumsum/Cumprod: the input's shape; the axis a scalar within its rank.
Status scan_shape(InferenceContext& c) {
  if (c.input(1).rank_known() && c.input(1).rank() != 0) {
    return c.invalid("axis must be a scalar, got shape {}", c.input(1).to_string());
  }
  const PartialShape& x = c.input(0);
  if (auto axis = c.input_as_ints(1); axis && x.rank_known()) {
    const int64_t a = (*axis)[0];
    if (a < -x.rank() || a >= x.rank() || x.rank() == 0) {
      return c.invalid("axis {} is out of range for a tensor of rank {}", a, x.rank());
    }
  }
  c.set_output(0, x);
  return Status::OK();
}

// TopKV2: values and int32 indices, the last dimension replaced by k.
Status top_k_shape(InferenceContext& c) {
  if (c.input(1).rank_known() && c.input(1).rank() != 0) {
    return c.invalid("k must be a scalar, got shape {}", c.input(1).to_string());
  }
  const PartialShape& x = c.input(0);
  int64_t k = -1;
  if (auto given = c.input_as_ints(1)) {
    k = (*given)[0];
    if (k < 0) return c.invalid("Need k >= 0, got {}", k);
  }
  if (!x.rank_known()) return shapes::unknown(c);
  if (x.rank() < 1) return c.invalid("input must have rank >= 1, got a scalar");
  const int64_t last = x.dim(x.rank() - 1);
  if (k >= 0 && last >= 0 && last < k) {
    return c.invalid("input must have at least k={} columns, got {}", k, last);
  }
  std::vector<int64_t> dims = x.dims();
  dims.back() = k;
  c.set_output(0, PartialShape(dims));
  c.set_output(1, PartialShape(dims));
  return Status::OK();
}

Status reduction_shape(InferenceContext& c) {
  const PartialShape& in = c.input(0);
  bool keep_dims = c.attr<bool>("keep_dims");
  if (c.input(1).rank_known() && c.input(1).rank() > 1) {
    return c.invalid("axes must be a scalar or vector, got shape {}", c.input(1).to_string());
  }
  auto axes = c.input_as_ints(1);
  if (!in.rank_known() || !axes) {
    c.set_output(0, keep_dims && in.rank_known() ? PartialShape::unknown_of_rank(in.rank())
                                                 : PartialShape::unknown());
    return Status::OK();
  }
  std::map<int64_t, int64_t> reduced;  // axis -> as given
  for (int64_t axis : *axes) {
    if (axis < -in.rank() || axis >= in.rank()) {
      return c.invalid("axis {} is out of range for a tensor of rank {}", axis, in.rank());
    }
    auto [it, added] = reduced.emplace(axis < 0 ? axis + in.rank() : axis, axis);
    if (!added) {
      return c.invalid("axes contain a duplicate: {} and {} both name axis {}", it->second, axis,
                       it->first);
    }
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < in.rank(); ++i) {
    if (reduced.count(i) == 0) {
      dims.push_back(in.dim(i));
    } else if (keep_dims) {
      dims.push_back(1);
    }
  }
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

Status argmax_shape(InferenceContext& c) {
  const PartialShape& in = c.input(0);
  if (c.input(1).rank_known() && c.input(1).rank() != 0) {
    return c.invalid("axis must be a scalar, got shape {}", c.input(1).to_string());
  }
  if (in.rank_known() && in.rank() == 0) return c.invalid("input must have rank >= 1");
  auto axis = c.input_as_ints(1);
  if (!in.rank_known() || !axis) {
    c.set_output(0, in.rank_known() ? PartialShape::unknown_of_rank(in.rank() - 1)
                                    : PartialShape::unknown());
    return Status::OK();
  }
  int64_t a = (*axis)[0];
  if (a < -in.rank() || a >= in.rank()) {
    return c.invalid("axis {} is out of range for a tensor of rank {}", a, in.rank());
  }
  if (a < 0) a += in.rank();
  std::vector<int64_t> dims = in.dims();
  dims.erase(dims.begin() + a);
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

void register_binary(OpRegistry& r, const char* name, std::string_view types) {
  must_register(r,
                OpDefBuilder(name).input("x: T").input("y: T").output("z: T").attr(types).shape_fn(
                    shapes::broadcast_binary));
}

void register_unary(OpRegistry& r, const char* name, std::string_view types) {
  must_register(
      r, OpDefBuilder(name).input("x: T").output("y: T").attr(types).shape_fn(shapes::unchanged));
}

void register_reduction(OpRegistry& r, const char* name) {
  must_register(r, OpDefBuilder(name)
                       .input("input: T")
                       .input("reduction_indices: Tidx")
                       .output("output: T")
                       .attr(kNumeric)
                       .attr("Tidx: {int32, int64} = int32")
                       .attr("keep_dims: bool = false")
                       .shape_fn(reduction_shape));
}

}  // namespace

void register_math_ops(OpRegistry& r) {
  // uint8 as TensorFlow 1.x's CPU kernels take it: arithmetic that wraps modulo 256.
  for (const char* name : {"Add", "Sub", "Mul", "Div", "FloorDiv"})
    register_binary(r, name, "T: {float32, float64, int32, int64, uint8}");
  for (const char* name : {"FloorMod", "Maximum", "Minimum", "SquaredDifference"})
    register_binary(r, name, kNumeric);
  for (const char* name : {"LogicalAnd", "LogicalOr"}) {
    must_register(r,
                  OpDefBuilder(name).input("x: bool").input("y: bool").output("z: bool").shape_fn(
                      shapes::broadcast_binary));
  }
  register_binary(r, "Pow", kFloating);
  register_binary(r, "Atan2", kFloating);
  for (const char* name : {"Equal", "NotEqual"}) {
    must_register(r, OpDefBuilder(name)
                         .input("x: T")
                         .input("y: T")
                         .output("z: bool")
                         .attr("T: {float32, float64, int32, int64, bool, string, uint8}")
                         .shape_fn(shapes::broadcast_binary));
  }
  for (const char* name : {"Less", "LessEqual", "Greater", "GreaterEqual"}) {
    must_register(r, OpDefBuilder(name)
                         .input("x: T")
                         .input("y: T")
                         .output("z: bool")
                         .attr("T: {float32, float64, int32, int64, uint8}")
                         .shape_fn(shapes::broadcast_binary));
  }
  for (const char* name : {"Neg", "Square", "Abs", "Sign"})
    register_unary(r, name, kNumeric);
  for (const char* name :
       {"Sqrt", "Rsqrt", "Reciprocal", "Exp",   "Expm1", "Log",  "Log1p",    "Floor",
        "Ceil", "Round", "Cos",        "Sin",   "Tan",   "Asin", "Acos",     "Atan",
        "Sinh", "Cosh",  "Erf",        "Relu6", "Elu",   "Selu", "Softplus", "Softsign"})
    register_unary(r, name, kFloating);
  // Whether each element is NaN, infinite, or neither: bool tensors of x's shape.
  for (const char* name : {"IsNan", "IsInf", "IsFinite"}) {
    must_register(r, OpDefBuilder(name).input("x: T").output("y: bool").attr(kFloating).shape_fn(
                         shapes::unchanged));
  }
  must_register(r, OpDefBuilder("MatMul")
                       .input("a: T")
                       .input("b: T")
                       .output("product: T")
                       .attr(kNumeric)
                       .attr("transpose_a: bool = false")
                       .attr("transpose_b: bool = false")
                       .shape_fn(matmul_shape));
  // The QR decomposition of each matrix of `input` ([..., M, N]): q [..., M, K] with
  // orthonormal columns and upper-triangular r [..., K, N], K = min(M, N) (full_matrices:
  // q [..., M, M], r [..., M, N]). Householder reflections, as TensorFlow's (tf.qr).
  must_register(r, OpDefBuilder("Qr")
                       .input("input: T")
                       .output("q: T")
                       .output("r: T")
                       .attr(kFloating)
                       .attr("full_matrices: bool = false")
                       .shape_fn([](InferenceContext& c) -> Status {
                         const PartialShape& in = c.input(0);
                         if (!in.rank_known()) return shapes::unknown(c);
                         if (in.rank() < 2) {
                           return c.invalid("input must have rank >= 2, got shape {}",
                                            in.to_string());
                         }
                         std::vector<int64_t> q = in.dims(), r = in.dims();
                         const int64_t m = in.dim(in.rank() - 2), n = in.dim(in.rank() - 1);
                         const int64_t k = m < 0 || n < 0 ? -1 : std::min(m, n);
                         const bool full = c.attr<bool>("full_matrices");
                         q.back() = full ? m : k;
                         r[r.size() - 2] = full ? m : k;
                         c.set_output(0, PartialShape(q));
                         c.set_output(1, PartialShape(r));
                         return Status::OK();
                       }));
  // Solves A X = B (or A^T X = B with adjoint) for X, A [..., M, M] triangular (its lower or
  // upper triangle is read, the rest ignored), B [..., M, K], equal batch dimensions
  // (TensorFlow 1.x's, before broadcasting).
  must_register(r, OpDefBuilder("MatrixTriangularSolve")
                       .input("matrix: T")
                       .input("rhs: T")
                       .output("output: T")
                       .attr(kFloating)
                       .attr("lower: bool = true")
                       .attr("adjoint: bool = false")
                       .shape_fn([](InferenceContext& c) -> Status {
                         const PartialShape& a = c.input(0);
                         const PartialShape& b = c.input(1);
                         if (!a.rank_known() || !b.rank_known()) {
                           c.set_output(0, b);
                           return Status::OK();
                         }
                         if (a.rank() < 2 || b.rank() != a.rank()) {
                           return c.invalid(
                               "matrix must have rank >= 2 and rhs the same rank, got shapes {} "
                               "and {}",
                               a.to_string(), b.to_string());
                         }
                         const int64_t rows = a.dim(a.rank() - 2), cols = a.dim(a.rank() - 1);
                         if (rows >= 0 && cols >= 0 && rows != cols) {
                           return c.invalid("matrix must be square, got shape {}", a.to_string());
                         }
                         const int64_t m = rows >= 0 ? rows : cols, b_rows = b.dim(b.rank() - 2);
                         if (m >= 0 && b_rows >= 0 && m != b_rows) {
                           return c.invalid(
                               "matrix and rhs must have the same number of rows, got shapes {} "
                               "and {}",
                               a.to_string(), b.to_string());
                         }
                         for (int d = 0; d + 2 < a.rank(); ++d) {
                           if (a.dim(d) >= 0 && b.dim(d) >= 0 && a.dim(d) != b.dim(d)) {
                             return c.invalid(
                                 "matrix and rhs must have the same batch dimensions, got shapes "
                                 "{} and {}",
                                 a.to_string(), b.to_string());
                           }
                         }
                         c.set_output(0, b);
                         return Status::OK();
                       }));
  must_register(r, OpDefBuilder("BatchMatMul")
                       .input("x: T")
                       .input("y: T")
                       .output("output: T")
                       .attr(kFloating)
                       .attr("adj_x: bool = false")
                       .attr("adj_y: bool = false")
                       .shape_fn(batch_matmul_shape));
  for (const char* name : {"Cumsum", "Cumprod"}) {
    must_register(r, OpDefBuilder(name)
                         .input("x: T")
                         .input("axis: Tidx")
                         .output("out: T")
                         .attr("exclusive: bool = false")
                         .attr("reverse: bool = false")
                         .attr(kNumeric)
                         .attr("Tidx: {int32, int64} = int32")
                         .shape_fn(scan_shape));
  }
  must_register(r, OpDefBuilder("TopKV2")
                       .input("input: T")
                       .input("k: int32")
                       .output("values: T")
                       .output("indices: int32")
                       .attr("sorted: bool = true")
                       .attr(kNumeric)
                       .shape_fn(top_k_shape));
  for (const char* name : {"Sum", "Prod", "Mean", "Min", "Max"})
    register_reduction(r, name);
  must_register(r, OpDefBuilder("Cast")
                       .input("x: SrcT")
                       .output("y: DstT")
                       .attr("SrcT: {float32, float64, int32, int64, bool, uint8}")
                       .attr("DstT: {float32, float64, int32, int64, bool, uint8}")
                       .shape_fn(shapes::unchanged));
  must_register(r, OpDefBuilder("ArgMax")
                       .input("input: T")
                       .input("dimension: Tidx")
                       .output("output: output_type")
                       .attr(kNumeric)
                       .attr("Tidx: {int32, int64} = int32")
                       .attr("output_type: {int32, int64} = int64")
                       .shape_fn(argmax_shape));
}

namespace ops {
namespace {

Output binary(const char* op, const Scope& scope, const Input& x, const Input& y) {
  return NodeBuilder(scope, op).input(x).input(y).finalize();
}

Output unary(const char* op, const Scope& scope, const Input& x) {
  return NodeBuilder(scope, op).input(x).finalize();
}

Output reduction(const char* op, const Scope& scope, const Input& input, const Input& axes,
                 ReduceOptions options) {
  return NodeBuilder(scope, op)
      .input(input)
      .input(axes)
      .attr("keep_dims", options.keep_dims)
      .finalize();
}

}  // namespace

Output Add(const Scope& s, const Input& x, const Input& y) {
  return binary("Add", s, x, y);
}
Output Sub(const Scope& s, const Input& x, const Input& y) {
  return binary("Sub", s, x, y);
}
Output Mul(const Scope& s, const Input& x, const Input& y) {
  return binary("Mul", s, x, y);
}
Output Div(const Scope& s, const Input& x, const Input& y) {
  return binary("Div", s, x, y);
}
Output Maximum(const Scope& s, const Input& x, const Input& y) {
  return binary("Maximum", s, x, y);
}

Output Minimum(const Scope& s, const Input& x, const Input& y) {
  return binary("Minimum", s, x, y);
}
Output Pow(const Scope& s, const Input& x, const Input& y) {
  return binary("Pow", s, x, y);
}
Output Atan2(const Scope& s, const Input& y, const Input& x) {
  return binary("Atan2", s, y, x);
}
Output SquaredDifference(const Scope& s, const Input& x, const Input& y) {
  return binary("SquaredDifference", s, x, y);
}
Output Equal(const Scope& s, const Input& x, const Input& y) {
  return binary("Equal", s, x, y);
}
Output NotEqual(const Scope& s, const Input& x, const Input& y) {
  return binary("NotEqual", s, x, y);
}
Output Less(const Scope& s, const Input& x, const Input& y) {
  return binary("Less", s, x, y);
}
Output LessEqual(const Scope& s, const Input& x, const Input& y) {
  return binary("LessEqual", s, x, y);
}
Output Greater(const Scope& s, const Input& x, const Input& y) {
  return binary("Greater", s, x, y);
}
Output GreaterEqual(const Scope& s, const Input& x, const Input& y) {
  return binary("GreaterEqual", s, x, y);
}

Output Neg(const Scope& s, const Input& x) {
  return unary("Neg", s, x);
}
Output Square(const Scope& s, const Input& x) {
  return unary("Square", s, x);
}
Output Sqrt(const Scope& s, const Input& x) {
  return unary("Sqrt", s, x);
}
Output Exp(const Scope& s, const Input& x) {
  return unary("Exp", s, x);
}
Output Log(const Scope& s, const Input& x) {
  return unary("Log", s, x);
}
Output Abs(const Scope& s, const Input& x) {
  return unary("Abs", s, x);
}
Output Sign(const Scope& s, const Input& x) {
  return unary("Sign", s, x);
}
Output Rsqrt(const Scope& s, const Input& x) {
  return unary("Rsqrt", s, x);
}
Output Reciprocal(const Scope& s, const Input& x) {
  return unary("Reciprocal", s, x);
}
Output Expm1(const Scope& s, const Input& x) {
  return unary("Expm1", s, x);
}
Output Log1p(const Scope& s, const Input& x) {
  return unary("Log1p", s, x);
}
Output Floor(const Scope& s, const Input& x) {
  return unary("Floor", s, x);
}
Output Ceil(const Scope& s, const Input& x) {
  return unary("Ceil", s, x);
}
Output Round(const Scope& s, const Input& x) {
  return unary("Round", s, x);
}
Output Cos(const Scope& s, const Input& x) {
  return unary("Cos", s, x);
}
Output Sin(const Scope& s, const Input& x) {
  return unary("Sin", s, x);
}
Output Tan(const Scope& s, const Input& x) {
  return unary("Tan", s, x);
}
Output Asin(const Scope& s, const Input& x) {
  return unary("Asin", s, x);
}
Output Acos(const Scope& s, const Input& x) {
  return unary("Acos", s, x);
}
Output Atan(const Scope& s, const Input& x) {
  return unary("Atan", s, x);
}
Output Sinh(const Scope& s, const Input& x) {
  return unary("Sinh", s, x);
}
Output Cosh(const Scope& s, const Input& x) {
  return unary("Cosh", s, x);
}
Output IsNan(const Scope& s, const Input& x) {
  return unary("IsNan", s, x);
}
Output IsInf(const Scope& s, const Input& x) {
  return unary("IsInf", s, x);
}
Output IsFinite(const Scope& s, const Input& x) {
  return unary("IsFinite", s, x);
}
Output Erf(const Scope& s, const Input& x) {
  return unary("Erf", s, x);
}
Output Relu6(const Scope& s, const Input& x) {
  return unary("Relu6", s, x);
}
Output Elu(const Scope& s, const Input& x) {
  return unary("Elu", s, x);
}
Output Selu(const Scope& s, const Input& x) {
  return unary("Selu", s, x);
}
Output Softplus(const Scope& s, const Input& x) {
  return unary("Softplus", s, x);
}
Output Softsign(const Scope& s, const Input& x) {
  return unary("Softsign", s, x);
}
Output BatchMatMul(const Scope& s, const Input& x, const Input& y, bool adj_x, bool adj_y) {
  return NodeBuilder(s, "BatchMatMul")
      .input(x)
      .input(y)
      .attr("adj_x", adj_x)
      .attr("adj_y", adj_y)
      .finalize();
}

Output MatrixTriangularSolve(const Scope& s, const Input& matrix, const Input& rhs, bool lower,
                             bool adjoint) {
  return NodeBuilder(s, "MatrixTriangularSolve")
      .input(matrix)
      .input(rhs)
      .attr("lower", lower)
      .attr("adjoint", adjoint)
      .finalize();
}

Output Cumsum(const Scope& s, const Input& x, const Input& axis, bool exclusive, bool reverse) {
  return NodeBuilder(s, "Cumsum")
      .input(x)
      .input(axis)
      .attr("exclusive", exclusive)
      .attr("reverse", reverse)
      .finalize();
}

Output Cumprod(const Scope& s, const Input& x, const Input& axis, bool exclusive, bool reverse) {
  return NodeBuilder(s, "Cumprod")
      .input(x)
      .input(axis)
      .attr("exclusive", exclusive)
      .attr("reverse", reverse)
      .finalize();
}

TopK TopKV2(const Scope& s, const Input& input, const Input& k, bool sorted) {
  Operation op = NodeBuilder(s, "TopKV2").input(input).input(k).attr("sorted", sorted).finalize();
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

Output FloorDiv(const Scope& s, const Input& x, const Input& y) {
  return binary("FloorDiv", s, x, y);
}
Output FloorMod(const Scope& s, const Input& x, const Input& y) {
  return binary("FloorMod", s, x, y);
}
Output LogicalAnd(const Scope& s, const Input& x, const Input& y) {
  return binary("LogicalAnd", s, x, y);
}
Output LogicalOr(const Scope& s, const Input& x, const Input& y) {
  return binary("LogicalOr", s, x, y);
}

Output MatMul(const Scope& s, const Input& a, const Input& b, MatMulOptions options) {
  return NodeBuilder(s, "MatMul")
      .input(a)
      .input(b)
      .attr("transpose_a", options.transpose_a)
      .attr("transpose_b", options.transpose_b)
      .finalize();
}

Output Sum(const Scope& s, const Input& in, const Input& axes, ReduceOptions o) {
  return reduction("Sum", s, in, axes, o);
}

Output Prod(const Scope& s, const Input& in, const Input& axes, ReduceOptions o) {
  return reduction("Prod", s, in, axes, o);
}
Output Mean(const Scope& s, const Input& in, const Input& axes, ReduceOptions o) {
  return reduction("Mean", s, in, axes, o);
}
Output Min(const Scope& s, const Input& in, const Input& axes, ReduceOptions o) {
  return reduction("Min", s, in, axes, o);
}
Output Max(const Scope& s, const Input& in, const Input& axes, ReduceOptions o) {
  return reduction("Max", s, in, axes, o);
}

Output Cast(const Scope& s, const Input& x, DataType dtype) {
  return NodeBuilder(s, "Cast").input(x).attr("DstT", dtype).finalize();
}

Output ArgMax(const Scope& s, const Input& input, const Input& axis, DataType output_type) {
  return NodeBuilder(s, "ArgMax")
      .input(input)
      .input(axis)
      .attr("output_type", output_type)
      .finalize();
}

}  // namespace ops
}  // namespace troupe
