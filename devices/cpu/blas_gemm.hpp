// Matrix products of float and double through OpenBLAS (the optimised kernels for the CPU it
// runs on, chosen at run time), threaded by OpenBLAS's own pool.
//
// OpenBLAS's thread count is per process: each Device reserves its intra_op_threads at
// creation, and products use the largest count reserved in the process (so a device of one
// thread beside a device of two may compute its products on two). OpenBLAS splits a product
// across its threads sharing the packed operands, and its threads wait for work spinning
// briefly: measured on the training step (docs/PERFORMANCE.md), this beat splitting products
// into panels over the device's Eigen pool by 1.3x. troupe links OpenBLAS's pthread build,
// whose buffers are locked for callers on several threads at once (the serial build's are not,
// and concurrent products came out wrong).
#pragma once

#include <cstdint>

namespace troupe {

struct GemmShape {
  int64_t rows = 0, inner = 0, cols = 0;  // out[rows, cols] = op(a)[rows, inner] op(b)[inner, cols]
  bool transpose_a = false, transpose_b = false;
};

// Raises OpenBLAS's threads to `threads` if fewer are reserved; Device's constructor calls it.
void reserve_blas_threads(int threads);
// The threads OpenBLAS may use for one product in this process (1 until a device reserves more).
int blas_threads_in_use();

// Whether blas_gemm takes matrices of these sizes (BLAS indexes with 32-bit integers).
bool blas_gemm_fits(const GemmShape& shape);

// out = op(a) * op(b), all row-major and dense; `a` is [rows, inner] ([inner, rows] if
// transposed), `b` is [inner, cols] ([cols, inner] if transposed).
void blas_gemm(const GemmShape& shape, const float* a, const float* b, float* out);
void blas_gemm(const GemmShape& shape, const double* a, const double* b, double* out);

}  // namespace troupe
