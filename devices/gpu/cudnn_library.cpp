// cudnn_library(): dlopen and dlsym, once per process.
#include "troupe/devices/gpu/cudnn_library.hpp"

#ifdef TROUPE_HAVE_CUDNN

#include <dlfcn.h>

#include <string>

namespace troupe {
namespace {

StatusOr<CudnnLibrary> load() {
  const std::string versioned = "libcudnn.so." + std::to_string(CUDNN_MAJOR);
  void* handle = dlopen(versioned.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) handle = dlopen("libcudnn.so", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return errors::FailedPrecondition("cannot load cuDNN ({} or libcudnn.so): {}", versioned,
                                      why != nullptr ? why : "unknown error");
  }
  CudnnLibrary l;
  Status status;
  auto resolve = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
    if (function == nullptr && status.ok()) {
      status = errors::FailedPrecondition("cuDNN ({}) has no {}", versioned, name);
    }
  };
  resolve(l.create, "cudnnCreate");
  resolve(l.destroy, "cudnnDestroy");
  resolve(l.set_stream, "cudnnSetStream");
  resolve(l.error_string, "cudnnGetErrorString");
  resolve(l.create_tensor, "cudnnCreateTensorDescriptor");
  resolve(l.set_tensor, "cudnnSetTensor4dDescriptor");
  resolve(l.destroy_tensor, "cudnnDestroyTensorDescriptor");
  resolve(l.create_filter, "cudnnCreateFilterDescriptor");
  resolve(l.set_filter, "cudnnSetFilter4dDescriptor");
  resolve(l.destroy_filter, "cudnnDestroyFilterDescriptor");
  resolve(l.create_convolution, "cudnnCreateConvolutionDescriptor");
  resolve(l.set_convolution, "cudnnSetConvolution2dDescriptor");
  resolve(l.set_math_type, "cudnnSetConvolutionMathType");
  resolve(l.destroy_convolution, "cudnnDestroyConvolutionDescriptor");
  resolve(l.forward_algorithms, "cudnnGetConvolutionForwardAlgorithm_v7");
  resolve(l.forward_workspace, "cudnnGetConvolutionForwardWorkspaceSize");
  resolve(l.forward, "cudnnConvolutionForward");
  resolve(l.data_algorithms, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  resolve(l.data_workspace, "cudnnGetConvolutionBackwardDataWorkspaceSize");
  resolve(l.backward_data, "cudnnConvolutionBackwardData");
  resolve(l.filter_algorithms, "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  resolve(l.filter_workspace, "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  resolve(l.backward_filter, "cudnnConvolutionBackwardFilter");
  resolve(l.find_forward, "cudnnFindConvolutionForwardAlgorithmEx");
  resolve(l.find_data, "cudnnFindConvolutionBackwardDataAlgorithmEx");
  resolve(l.find_filter, "cudnnFindConvolutionBackwardFilterAlgorithmEx");
  resolve(l.backend_create, "cudnnBackendCreateDescriptor");
  resolve(l.backend_destroy, "cudnnBackendDestroyDescriptor");
  resolve(l.backend_set, "cudnnBackendSetAttribute");
  resolve(l.backend_get, "cudnnBackendGetAttribute");
  resolve(l.backend_finalize, "cudnnBackendFinalize");
  resolve(l.backend_execute, "cudnnBackendExecute");
  TROUPE_RETURN_IF_ERROR(status);
  return l;  // the handle stays open for the life of the process
}

}  // namespace

StatusOr<const CudnnLibrary*> cudnn_library() {
  static const StatusOr<CudnnLibrary> library = load();
  if (!library.ok()) return library.status();
  return &*library;
}

}  // namespace troupe

#endif  // TROUPE_HAVE_CUDNN
