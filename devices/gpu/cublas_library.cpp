// cublas_library(): dlopen and dlsym, once per process.
#include "troupe/devices/gpu/cublas_library.hpp"

#include <dlfcn.h>

#include <string>

namespace troupe {
namespace {

StatusOr<CublasLibrary> load() {
  const std::string versioned = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* handle = dlopen(versioned.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) handle = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return errors::FailedPrecondition("cannot load cuBLAS ({} or libcublas.so): {}", versioned,
                                      why != nullptr ? why : "unknown error");
  }
  CublasLibrary library;
  auto resolve = [&](auto& function, const char* name) -> Status {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
    if (function == nullptr) {
      return errors::FailedPrecondition("cuBLAS ({}) has no {}", versioned, name);
    }
    return Status::OK();
  };
  TROUPE_RETURN_IF_ERROR(resolve(library.create, "cublasCreate_v2"));
  TROUPE_RETURN_IF_ERROR(resolve(library.destroy, "cublasDestroy_v2"));
  TROUPE_RETURN_IF_ERROR(resolve(library.set_stream, "cublasSetStream_v2"));
  TROUPE_RETURN_IF_ERROR(resolve(library.sgemm, "cublasSgemm_v2"));
  TROUPE_RETURN_IF_ERROR(resolve(library.sgemm_strided_batched, "cublasSgemmStridedBatched"));
  return library;  // the handle stays open for the life of the process
}

}  // namespace

StatusOr<const CublasLibrary*> cublas_library() {
  static const StatusOr<CublasLibrary> library = load();
  if (!library.ok()) return library.status();
  return &*library;
}

}  // namespace troupe
