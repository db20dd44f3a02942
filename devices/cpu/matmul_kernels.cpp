// CPU kernels for MatMul: OpenBLAS for float and double (devices/cpu/blas_gemm.hpp), an Eigen
// tensor contraction on the device's thread pool for the other types; and BatchMatMul (float
// and double), one OpenBLAS product per matrix of the batch.
#include "troupe/devices/cpu/blas_gemm.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/eigen.hpp"

#include <Eigen/QR>

namespace troupe {
namespace {

template <class T>
class MatMulKernel : public OpKernel {
 public:
  explicit MatMulKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        transpose_a_(c.attr<bool>("transpose_a")),
        transpose_b_(c.attr<bool>("transpose_b")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.rank() != 2 || b.rank() != 2) {
      ctx.fail_invalid("inputs must be matrices, got shapes {} and {}", a.shape().to_string(),
                       b.shape().to_string());
      return;
    }
    const int64_t rows = a.dim(transpose_a_ ? 1 : 0), inner = a.dim(transpose_a_ ? 0 : 1);
    const int64_t inner_b = b.dim(transpose_b_ ? 1 : 0), cols = b.dim(transpose_b_ ? 0 : 1);
    if (inner != inner_b) {
      ctx.fail_invalid("inner dimensions differ: {} x {} (shapes {} and {})", inner, inner_b,
                       a.shape().to_string(), b.shape().to_string());
      return;
    }
    Tensor& out = ctx.allocate_output(0, TensorShape{rows, cols});
    using Matrix = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>, Eigen::Unaligned>;
    Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>, Eigen::Unaligned> result(out.data<T>(),
                                                                                    rows, cols);
    if (inner == 0) {
      result.setZero();
      return;
    }
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      GemmShape shape{rows, inner, cols, transpose_a_, transpose_b_};
      if (blas_gemm_fits(shape)) {
        blas_gemm(shape, a.data<T>(), b.data<T>(), out.data<T>());
        return;
      }
    }
    Matrix ma(a.data<T>(), a.dim(0), a.dim(1));
    Matrix mb(b.data<T>(), b.dim(0), b.dim(1));
    Eigen::array<Eigen::IndexPair<Eigen::Index>, 1> dims = {
        Eigen::IndexPair<Eigen::Index>(transpose_a_ ? 0 : 1, transpose_b_ ? 1 : 0)};
    result.device(ctx.device().eigen_cpu()) = ma.contract(mb, dims);
  }

 private:
  bool transpose_a_;
  bool transpose_b_;
};

template <class T>
class BatchMatMulKernel : public OpKernel {
 public:
  explicit BatchMatMulKernel(const OpKernelConstruction& c)
      : OpKernel(c), adj_x_(c.attr<bool>("adj_x")), adj_y_(c.attr<bool>("adj_y")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    const int rank = x.rank();
    bool ok = rank >= 2 && y.rank() == rank;
    for (int d = 0; ok && d + 2 < rank; ++d)
      ok = x.dim(d) == y.dim(d);
    const int64_t rows = ok ? x.dim(rank - (adj_x_ ? 1 : 2)) : 0;
    const int64_t inner = ok ? x.dim(rank - (adj_x_ ? 2 : 1)) : 0;
    const int64_t cols = ok ? y.dim(rank - (adj_y_ ? 2 : 1)) : 0;
    if (!ok || inner != y.dim(rank - (adj_y_ ? 1 : 2))) {
      ctx.fail_invalid(
          "expected matrices of one rank, equal batch dimensions and matching inner dimensions, "
          "got shapes {} and {}",
          x.shape().to_string(), y.shape().to_string());
      return;
    }
    std::vector<int64_t> dims(x.shape().dims().begin(), x.shape().dims().end() - 2);
    int64_t batch = 1;
    for (int64_t d : dims)
      batch *= d;
    dims.push_back(rows);
    dims.push_back(cols);
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    const GemmShape shape{rows, inner, cols, adj_x_, adj_y_};
    if (rows * cols == 0) return;
    if (inner == 0) {
      std::fill_n(out.data<T>(), out.num_elements(), T(0));
      return;
    }
    if (!blas_gemm_fits(shape)) {
      ctx.fail_invalid("matrices of {} x {} x {} are too large for BLAS", rows, inner, cols);
      return;
    }
    for (int64_t b = 0; b < batch; ++b) {
      blas_gemm(shape, x.data<T>() + b * rows * inner, y.data<T>() + b * inner * cols,
                out.data<T>() + b * rows * cols);
    }
  }

 private:
  bool adj_x_;
  bool adj_y_;
};

// tf.qr: Eigen's Householder QR of each matrix, in column-major copies.
template <class T>
class QrKernel : public OpKernel {
 public:
  explicit QrKernel(const OpKernelConstruction& c)
      : OpKernel(c), full_(c.attr<bool>("full_matrices")) {}

  void compute(OpKernelContext& ctx) override {
    using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Tensor& input = ctx.input(0);
    const int rank = input.rank();
    if (rank < 2) {
      ctx.fail_invalid("input must have rank >= 2, got shape {}", input.shape().to_string());
      return;
    }
    const int64_t m = input.dim(rank - 2), n = input.dim(rank - 1), k = std::min(m, n);
    const int64_t q_cols = full_ ? m : k, r_rows = full_ ? m : k;
    std::vector<int64_t> q_dims = input.shape().dims(), r_dims = input.shape().dims();
    q_dims.back() = q_cols;
    r_dims[rank - 2] = r_rows;
    Tensor& q = ctx.allocate_output(0, TensorShape(q_dims));
    Tensor& r = ctx.allocate_output(1, TensorShape(r_dims));
    int64_t batch = 1;
    for (int d = 0; d + 2 < rank; ++d)
      batch *= input.dim(d);
    for (int64_t b = 0; b < batch; ++b) {
      Eigen::Map<Matrix> q_out(q.data<T>() + b * m * q_cols, m, q_cols);
      Eigen::Map<Matrix> r_out(r.data<T>() + b * r_rows * n, r_rows, n);
      if (k == 0) {  // an empty matrix: Q is the identity
        q_out = Matrix::Identity(m, q_cols);
        r_out.setZero();
        continue;
      }
      Eigen::Map<const Matrix> a(input.data<T>() + b * m * n, m, n);
      Eigen::HouseholderQR<Matrix> qr(a);
      q_out = qr.householderQ() * Matrix::Identity(m, q_cols);
      r_out = qr.matrixQR().topRows(r_rows).template triangularView<Eigen::Upper>();
    }
  }

 private:
  bool full_;
};

}  // namespace

// MatrixTriangularSolve: each batch's triangle solved by substitution (Eigen's triangular
// solve on the row-major matrices).
template <class T>
class MatrixTriangularSolveKernel : public OpKernel {
 public:
  explicit MatrixTriangularSolveKernel(const OpKernelConstruction& c)
      : OpKernel(c), lower_(c.attr<bool>("lower")), adjoint_(c.attr<bool>("adjoint")) {}

  void compute(OpKernelContext& ctx) override {
    using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const int rank = a.rank();
    if (rank < 2 || b.rank() != rank || a.dim(rank - 1) != a.dim(rank - 2) ||
        b.dim(rank - 2) != a.dim(rank - 2)) {
      ctx.fail_invalid(
          "matrix must be [..., M, M] and rhs [..., M, K] of the same rank, got shapes {} and {}",
          a.shape().to_string(), b.shape().to_string());
      return;
    }
    int64_t batch = 1;
    for (int d = 0; d + 2 < rank; ++d) {
      if (a.dim(d) != b.dim(d)) {
        ctx.fail_invalid("matrix and rhs must have the same batch dimensions, got shapes {} and {}",
                         a.shape().to_string(), b.shape().to_string());
        return;
      }
      batch *= a.dim(d);
    }
    const int64_t m = a.dim(rank - 1), k = b.dim(rank - 1);
    Tensor& out = ctx.allocate_output(0, b.shape());
    for (int64_t i = 0; i < batch; ++i) {
      Eigen::Map<const Matrix> matrix(a.data<T>() + i * m * m, m, m);
      Eigen::Map<const Matrix> rhs(b.data<T>() + i * m * k, m, k);
      Eigen::Map<Matrix> x(out.data<T>() + i * m * k, m, k);
      if (m > 0 && (matrix.diagonal().array() == T(0)).any()) {
        ctx.set_status(errors::InvalidArgument("node '{}' ({}): Input matrix is not invertible.",
                                               node().name(), node().op_name()));
        return;
      }
      // The transpose of a lower triangle is an upper one, and the other way round.
      if (lower_ && !adjoint_) {
        x = matrix.template triangularView<Eigen::Lower>().solve(rhs);
      } else if (lower_) {
        x = matrix.transpose().template triangularView<Eigen::Upper>().solve(rhs);
      } else if (!adjoint_) {
        x = matrix.template triangularView<Eigen::Upper>().solve(rhs);
      } else {
        x = matrix.transpose().template triangularView<Eigen::Lower>().solve(rhs);
      }
    }
  }

 private:
  bool lower_;
  bool adjoint_;
};

void register_matmul_kernels(KernelRegistry& r) {
  must_add_kernel(r, "MatrixTriangularSolve", kCpu, floating_kernel<MatrixTriangularSolveKernel>());
  must_add_kernel(r, "Qr", kCpu, floating_kernel<QrKernel>());
  must_add_kernel(r, "MatMul", kCpu, numeric_kernel<MatMulKernel>());
  must_add_kernel(r, "BatchMatMul", kCpu, floating_kernel<BatchMatMulKernel>());
}

}  // namespace troupe
