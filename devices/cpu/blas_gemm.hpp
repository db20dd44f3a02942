// Matrix products of float and double through OpenBLAS (the optimised kernels for the CPU it
// runs on, chosen at run time), split into row panels over the device's thread pool so that
// intra_op_threads holds. troupe links OpenBLAS's pthread build, whose buffers are locked for
// callers on several threads at once, and keeps it to the calling thread: the device owns the
// threads.
#pragma once

#include <cstdint>

#include "troupe/devices/device.hpp"

namespace troupe {

struct GemmShape {
  int64_t rows = 0, inner = 0, cols = 0;  // out[rows, cols] = op(a)[rows, inner] op(b)[inner, cols]
  bool transpose_a = false, transpose_b = false;
};

// Whether blas_gemm takes matrices of these sizes (BLAS indexes with 32-bit integers).
bool blas_gemm_fits(const GemmShape& shape);

// out = op(a) * op(b), all row-major and dense; `a` is [rows, inner] ([inner, rows] if
// transposed), `b` is [inner, cols] ([cols, inner] if transposed).
void blas_gemm(const Device& device, const GemmShape& shape, const float* a, const float* b,
               float* out);
void blas_gemm(const Device& device, const GemmShape& shape, const double* a, const double* b,
               double* out);

}  // namespace troupe
