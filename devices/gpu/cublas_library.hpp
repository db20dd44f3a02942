// cuBLAS, loaded with dlopen when the first GPU opens rather than linked: its libraries (about
// 600 MB with cuBLASLt) would otherwise be mapped, and their relocations cost tens of MB of
// memory, in every troupe process, GPU or not. The functions troupe calls, resolved once.
#pragma once

#include <cublas_v2.h>

#include "troupe/graph/core/status.hpp"

namespace troupe {

struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched = nullptr;
};

// The library of the cuBLAS major version troupe was built with (libcublas.so.<major>, else
// libcublas.so); FailedPrecondition naming what dlopen or dlsym said when it cannot be loaded.
StatusOr<const CublasLibrary*> cublas_library();

}  // namespace troupe
