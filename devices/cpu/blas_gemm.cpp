// OpenBLAS's cblas_?gemm on row panels of the output.
#include "troupe/devices/cpu/blas_gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <limits>

#include "troupe/devices/cpu/parallel.hpp"

namespace troupe {
namespace {

// In OpenBLAS's pthread build: its thread pool, started at load, is stopped before main, and
// every call runs on the calling thread. Its buffers stay locked, unlike the serial build's,
// so the device's threads may call it at once (test/devices/blas_gemm_test.cpp).
extern "C" int blas_thread_shutdown_(void);
[[maybe_unused]] const bool kOpenBlasOnCallingThread = [] {
  openblas_set_num_threads(1);
  blas_thread_shutdown_();
  return true;
}();

// Rows a panel should at least have: fewer and BLAS's packing of `b` dominates.
constexpr int64_t kMinPanelRows = 32;

template <class T, class Gemm>
void gemm_panels(const Device& device, const GemmShape& s, const T* a, const T* b, T* out,
                 Gemm gemm) {
  const int lda = static_cast<int>(s.transpose_a ? s.rows : s.inner);
  const int ldb = static_cast<int>(s.transpose_b ? s.inner : s.cols);
  const int64_t panels = std::clamp<int64_t>(s.rows / kMinPanelRows, 1, device.intra_op_threads());
  const int64_t rows_per_panel = (s.rows + panels - 1) / panels;
  const double cycles_per_panel = 2.0 * static_cast<double>(rows_per_panel * s.inner * s.cols);
  parallel_for(device, panels, cycles_per_panel, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      int64_t first = p * rows_per_panel, rows = std::min(rows_per_panel, s.rows - first);
      if (rows <= 0) continue;
      // Rows [first, first + rows) of op(a): further down a, or further right in a transposed a.
      const T* panel_a = a + (s.transpose_a ? first : first * lda);
      gemm(CblasRowMajor, s.transpose_a ? CblasTrans : CblasNoTrans,
           s.transpose_b ? CblasTrans : CblasNoTrans, static_cast<int>(rows),
           static_cast<int>(s.cols), static_cast<int>(s.inner), T(1), panel_a, lda, b, ldb, T(0),
           out + first * s.cols, static_cast<int>(s.cols));
    }
  });
}

}  // namespace

bool blas_gemm_fits(const GemmShape& s) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  return s.rows <= kMax && s.inner <= kMax && s.cols <= kMax && s.rows > 0 && s.inner > 0 &&
         s.cols > 0;
}

void blas_gemm(const Device& device, const GemmShape& shape, const float* a, const float* b,
               float* out) {
  gemm_panels(device, shape, a, b, out, cblas_sgemm);
}

void blas_gemm(const Device& device, const GemmShape& shape, const double* a, const double* b,
               double* out) {
  gemm_panels(device, shape, a, b, out, cblas_dgemm);
}

}  // namespace troupe
