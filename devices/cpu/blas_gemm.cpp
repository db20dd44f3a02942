// OpenBLAS's cblas_?gemm, threaded by OpenBLAS itself up to the device's intra_op_threads.
#include "troupe/devices/cpu/blas_gemm.hpp"

#include <cblas.h>

#include <cstdlib>
#include <limits>
#include <mutex>

namespace troupe {
namespace {

// In OpenBLAS's pthread build: its thread pool, started at load, is stopped before main, so
// that no thread exists before a program blocks its stop signals (apps/cli/stop_signals.hpp).
// The pool starts again when a device reserves more than one thread (reserve_blas_threads:
// openblas_set_num_threads makes the threads there, one fewer than the count, since the caller
// computes too), from the thread that creates the device, whose signal mask they inherit.
//
// How long an idle OpenBLAS thread spins (sched_yield in a loop) before it sleeps is
// OPENBLAS_THREAD_TIMEOUT: 2^N cycles, read from the environment when the library loads, 2^28
// (about 0.1 s) by default. Spinning that long, the thread takes a core from the device's other
// kernels between products (im2col, pooling, the optimizer's update): a fifth of a CNN step's
// CPU went to its sched_yield. Unless the user set it, troupe makes it 2^20 (a third of a
// millisecond: the gaps between a step's products are shorter, so they still find the thread
// awake): the CNN of bench/cnn_single.py 0.9k -> 1.1k examples/s, the MLP unchanged
// (docs/PERFORMANCE.md). openblas_read_env reads it again; the pool started later uses it.
// This runs while the library loads: in a program that loads troupe (the Python module) while
// other threads read the environment, setenv could race with their getenv; set
// OPENBLAS_THREAD_TIMEOUT yourself (20) before such a load to leave the environment alone.
extern "C" int blas_thread_shutdown_(void);
extern "C" void openblas_read_env(void);
constexpr const char* kThreadTimeout = "20";
[[maybe_unused]] const bool kOpenBlasStoppedBeforeMain = [] {
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT") == nullptr) {
    setenv("OPENBLAS_THREAD_TIMEOUT", kThreadTimeout, 0);
    openblas_read_env();
    unsetenv("OPENBLAS_THREAD_TIMEOUT");  // not passed on to the programs troupe starts
  }
  openblas_set_num_threads(1);
  blas_thread_shutdown_();
  return true;
}();

std::mutex blas_threads_mutex;
int blas_threads = 1;  // guarded by blas_threads_mutex

}  // namespace

void reserve_blas_threads(int threads) {
  std::lock_guard lock(blas_threads_mutex);
  if (threads <= blas_threads) return;
  blas_threads = threads;
  openblas_set_num_threads(threads);
}

int blas_threads_in_use() {
  std::lock_guard lock(blas_threads_mutex);
  return blas_threads;
}

bool blas_gemm_fits(const GemmShape& s) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  return s.rows <= kMax && s.inner <= kMax && s.cols <= kMax && s.rows > 0 && s.inner > 0 &&
         s.cols > 0;
}

namespace {

template <class T, class Gemm>
void gemm(const GemmShape& s, const T* a, const T* b, T* out, Gemm blas) {
  blas(CblasRowMajor, s.transpose_a ? CblasTrans : CblasNoTrans,
       s.transpose_b ? CblasTrans : CblasNoTrans, static_cast<int>(s.rows),
       static_cast<int>(s.cols), static_cast<int>(s.inner), T(1), a,
       static_cast<int>(s.transpose_a ? s.rows : s.inner), b,
       static_cast<int>(s.transpose_b ? s.inner : s.cols), T(0), out, static_cast<int>(s.cols));
}

}  // namespace

void blas_gemm(const GemmShape& shape, const float* a, const float* b, float* out) {
  gemm(shape, a, b, out, cblas_sgemm);
}

void blas_gemm(const GemmShape& shape, const double* a, const double* b, double* out) {
  gemm(shape, a, b, out, cblas_dgemm);
}

}  // namespace troupe
