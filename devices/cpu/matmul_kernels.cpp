// CPU kernel for MatMul: OpenBLAS for float and double (devices/cpu/blas_gemm.hpp), an Eigen
// tensor contraction on the device's thread pool for the other types.
#include "troupe/devices/cpu/blas_gemm.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/eigen.hpp"

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

}  // namespace

void register_matmul_kernels(KernelRegistry& r) {
  must_add_kernel(r, "MatMul", kCpu, numeric_kernel<MatMulKernel>());
}

}  // namespace troupe
