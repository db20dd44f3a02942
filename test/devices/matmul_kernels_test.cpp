// Tests for the MatMul kernel: hand-computed products with and without transposes, each dtype,
// degenerate sizes, and inner-dimension errors at build and at run time.
#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

BOOST_AUTO_TEST_SUITE(matmul_kernels)

// [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]], whichever operands are stored transposed.
BOOST_AUTO_TEST_CASE(plain_and_transposed) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, {{1.f, 2.f}, {3.f, 4.f}});
  auto a_t = ops::Const(s, {{1.f, 3.f}, {2.f, 4.f}});
  auto b = ops::Const(s, {{5.f, 6.f}, {7.f, 8.f}});
  auto b_t = ops::Const(s, {{5.f, 7.f}, {6.f, 8.f}});
  const std::vector<float> expected = {19, 22, 43, 50};
  check_tensor<float>(run_one(s, ops::MatMul(s, a, b)), TensorShape{2, 2}, expected);
  check_tensor<float>(run_one(s, ops::MatMul(s, a_t, b, {.transpose_a = true})), TensorShape{2, 2},
                      expected);
  check_tensor<float>(run_one(s, ops::MatMul(s, a, b_t, {.transpose_b = true})), TensorShape{2, 2},
                      expected);
  check_tensor<float>(
      run_one(s, ops::MatMul(s, a_t, b_t, {.transpose_a = true, .transpose_b = true})),
      TensorShape{2, 2}, expected);
}

BOOST_AUTO_TEST_CASE(non_square_with_transposes) {
  Scope s = Scope::new_root();
  // a: [2,3], b: [3,1]; a x b = [[1-3], [4-6]].
  auto a = ops::Const(s, {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  auto b = ops::Const(s, {{1.0}, {0.0}, {-1.0}});
  auto product = ops::MatMul(s, a, b);
  BOOST_TEST(product.shape().to_string() == "[2,1]");
  check_tensor<double>(run_one(s, product), TensorShape{2, 1}, {-2, -2});
  // a^T x a: [3,3] = [[17,22,27],[22,29,36],[27,36,45]].
  auto gram = ops::MatMul(s, a, a, {.transpose_a = true});
  BOOST_TEST(gram.shape().to_string() == "[3,3]");
  check_tensor<double>(run_one(s, gram), TensorShape{3, 3}, {17, 22, 27, 22, 29, 36, 27, 36, 45});
  // a x a^T: [2,2] = [[14,32],[32,77]].
  check_tensor<double>(run_one(s, ops::MatMul(s, a, a, {.transpose_b = true})), TensorShape{2, 2},
                       {14, 32, 32, 77});
}

// Products big enough to be split into row panels across the device's two threads (BLAS path
// for float and double), in every layout, against a plain triple loop.
template <class T>
void check_against_reference(bool transpose_a, bool transpose_b) {
  const int64_t rows = 150, inner = 70, cols = 45;
  auto values = [](int64_t count, int seed) {
    std::vector<T> v(static_cast<size_t>(count));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<T>(((i * 37 + seed) % 19)) / 8 - 1;
    return v;
  };
  std::vector<T> a = values(rows * inner, 1), b = values(inner * cols, 2);
  // a_at(r, k) and b_at(k, c) read op(a) and op(b) from their stored layouts.
  auto a_at = [&](int64_t r, int64_t k) {
    return transpose_a ? a[k * rows + r] : a[r * inner + k];
  };
  auto b_at = [&](int64_t k, int64_t c) {
    return transpose_b ? b[c * inner + k] : b[k * cols + c];
  };
  std::vector<T> expected(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t k = 0; k < inner; ++k)
        expected[r * cols + c] += a_at(r, k) * b_at(k, c);
  Scope s = Scope::new_root();
  auto ca =
      ops::Const(s, value_or_throw(Tensor::from_vector<T>(
                        a, transpose_a ? TensorShape{inner, rows} : TensorShape{rows, inner})));
  auto cb =
      ops::Const(s, value_or_throw(Tensor::from_vector<T>(
                        b, transpose_b ? TensorShape{cols, inner} : TensorShape{inner, cols})));
  Tensor product =
      run_one(s, ops::MatMul(s, ca, cb, {.transpose_a = transpose_a, .transpose_b = transpose_b}));
  check_tensor<T>(product, TensorShape{rows, cols}, expected);
}

BOOST_AUTO_TEST_CASE(panels_in_every_layout_match_a_reference) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      BOOST_TEST_CONTEXT("transpose_a " << transpose_a << ", transpose_b " << transpose_b) {
        check_against_reference<float>(transpose_a, transpose_b);
        check_against_reference<double>(transpose_a, transpose_b);
        check_against_reference<int32_t>(transpose_a, transpose_b);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(integers) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, {{1, -2}, {3, 4}});
  auto b = ops::Const(s, {{5, 6}, {7, 8}});
  check_tensor<int32_t>(run_one(s, ops::MatMul(s, a, b)), TensorShape{2, 2}, {-9, -10, 43, 50});
  auto a64 = ops::Const(s, value_or_throw(Tensor::from_vector<int64_t>({2, 3}, {1, 2})));
  auto b64 = ops::Const(s, value_or_throw(Tensor::from_vector<int64_t>({4, 5}, {2, 1})));
  check_tensor<int64_t>(run_one(s, ops::MatMul(s, a64, b64)), TensorShape{1, 1}, {23});
}

BOOST_AUTO_TEST_CASE(row_times_column_is_one_by_one) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, {{2.f, 1.f}});
  auto b = ops::Const(s, {{1.f}, {2.f}});
  auto product = ops::MatMul(s, a, b);
  BOOST_TEST(product.shape().to_string() == "[1,1]");
  check_tensor<float>(run_one(s, product), TensorShape{1, 1}, {4});
}

BOOST_AUTO_TEST_CASE(zero_inner_dimension_gives_zeros) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, value_or_throw(Tensor::from_vector<float>({}, {2, 0})));
  auto b = ops::Const(s, value_or_throw(Tensor::from_vector<float>({}, {0, 3})));
  check_tensor<float>(run_one(s, ops::MatMul(s, a, b)), TensorShape{2, 3}, {0, 0, 0, 0, 0, 0});
}

BOOST_AUTO_TEST_CASE(inner_dimension_mismatch_when_building) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  ops::MatMul(s.with_op_name("bad_matmul"), a, a);
  check_error(s.status(), Code::kInvalidArgument, "node 'bad_matmul' (MatMul)");
  check_error(s.status(), Code::kInvalidArgument, "inner dimensions differ: 3 x 2");
}

BOOST_AUTO_TEST_CASE(inner_dimension_mismatch_with_both_transposed) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  ops::MatMul(s, a, a, {.transpose_a = true, .transpose_b = true});
  check_error(s.status(), Code::kInvalidArgument, "inner dimensions differ: 2 x 3");
}

BOOST_AUTO_TEST_CASE(inner_dimension_mismatch_when_running) {
  Scope s = Scope::new_root();
  auto a = ops::Placeholder(s, DataType::kFloat);
  auto b = ops::Placeholder(s, DataType::kFloat);
  auto product = ops::MatMul(s.with_op_name("late_matmul"), a, b);
  BOOST_REQUIRE(s.ok());
  auto result =
      run_graph(s, {product},
                {{a, value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}))},
                 {b, value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2}))}});
  check_error(result.status(), Code::kInvalidArgument, "node 'late_matmul' (MatMul)");
  check_error(result.status(), Code::kInvalidArgument, "inner dimensions differ");
  auto vector = run_graph(s, {product},
                          {{a, Tensor::from_vector<float>({1, 2})},
                           {b, value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2}))}});
  check_error(vector.status(), Code::kInvalidArgument, "must be matrices");
}

BOOST_AUTO_TEST_CASE(larger_product_on_the_thread_pool) {
  Scope s = Scope::new_root();
  // ones[64,128] x ones[128,32] = 128 everywhere.
  auto a = ops::Const(s, 1.f, TensorShape{64, 128});
  auto b = ops::Const(s, 1.f, TensorShape{128, 32});
  check_tensor<float>(run_one(s, ops::MatMul(s, a, b)), TensorShape{64, 32},
                      std::vector<float>(64 * 32, 128.f));
}

BOOST_AUTO_TEST_CASE(batch_matmul_multiplies_each_matrix_of_the_batch) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4, 1, 0, 0, 1},
                                                                   TensorShape{2, 2, 2})));
  auto y = ops::Const(s, value_or_throw(Tensor::from_vector<float>({1, 1, 0, 1, 5, 6, 7, 8},
                                                                   TensorShape{2, 2, 2})));
  auto product = ops::BatchMatMul(s, x, y);
  BOOST_TEST(product.shape().to_string() == "[2,2,2]");
  check_tensor<float>(run_one(s, product), TensorShape{2, 2, 2}, {1, 3, 3, 7, 5, 6, 7, 8});
  check_tensor<float>(run_one(s, ops::BatchMatMul(s, x, y, true, false)), TensorShape{2, 2, 2},
                      {1, 4, 2, 6, 5, 6, 7, 8});
  ops::BatchMatMul(s.with_op_name("mismatch"), x,
                   ops::Const(s, Tensor(DataType::kFloat, TensorShape{3, 2, 2})));
  check_error(s.status(), Code::kInvalidArgument,
              "node 'mismatch' (BatchMatMul): batch dimensions must be equal");
}

BOOST_AUTO_TEST_CASE(triangular_solve_reads_its_triangle_and_refuses_a_zero_pivot) {
  Scope s = Scope::new_root();
  // Lower [[2, 9], [1, 4]] (the 9 is not read): 2 x0 = 2, x0 + 4 x1 = 9 -> [1, 2].
  const Tensor a = value_or_throw(Tensor::from_vector<double>({2, 9, 1, 4}, {2, 2}));
  const Tensor b = value_or_throw(Tensor::from_vector<double>({2, 9}, {2, 1}));
  check_tensor<double>(run_one(s, ops::MatrixTriangularSolve(s, a, b)), TensorShape{2, 1}, {1, 2});
  // Upper [[2, 9], [., 4]]: 4 x1 = 9, 2 x0 + 9 x1 = 2.
  check_tensor<double>(run_one(s, ops::MatrixTriangularSolve(s, a, b, /*lower=*/false)),
                       TensorShape{2, 1}, {(2 - 9 * 2.25) / 2, 2.25});
  // Lower, transposed: [[2, 1], [0, 4]] x = b -> x1 = 2.25, x0 = (2 - 2.25) / 2.
  check_tensor<double>(
      run_one(s, ops::MatrixTriangularSolve(s, a, b, /*lower=*/true, /*adjoint=*/true)),
      TensorShape{2, 1}, {(2 - 2.25) / 2, 2.25});
  const Tensor singular = value_or_throw(Tensor::from_vector<double>({1, 0, 2, 0}, {2, 2}));
  check_error(
      run_graph(s, {ops::MatrixTriangularSolve(s.with_op_name("solve"), singular, b)}).status(),
      Code::kInvalidArgument, "node 'solve' (MatrixTriangularSolve): Input matrix is not");
  ops::MatrixTriangularSolve(s.with_op_name("not_square"), Tensor(DataType::kDouble, {2, 3}), b);
  check_error(s.status(), Code::kInvalidArgument, "matrix must be square");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
