// cuDNN, loaded with dlopen the first time a convolution runs on a GPU, where the toolkit has it
// (its header at build time, libcudnn.so.<major> at run time): GPU convolutions then run
// cuDNN's kernels. Without it (Debian's toolkit has no cuDNN) they are im2col products on cuBLAS.
#pragma once

#if __has_include(<cudnn.h>)
#include <cudnn.h>
#define TROUPE_HAVE_CUDNN 1

#include "troupe/graph/core/status.hpp"

namespace troupe {

struct CudnnLibrary {
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnDestroy) destroy = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&cudnnSetTensor4dDescriptor) set_tensor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&cudnnSetFilter4dDescriptor) set_filter = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) create_convolution = nullptr;
  decltype(&cudnnSetConvolution2dDescriptor) set_convolution = nullptr;
  decltype(&cudnnSetConvolutionMathType) set_math_type = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_convolution = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) forward_algorithms = nullptr;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) forward_workspace = nullptr;
  decltype(&cudnnConvolutionForward) forward = nullptr;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) data_algorithms = nullptr;
  decltype(&cudnnGetConvolutionBackwardDataWorkspaceSize) data_workspace = nullptr;
  decltype(&cudnnConvolutionBackwardData) backward_data = nullptr;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7) filter_algorithms = nullptr;
  decltype(&cudnnGetConvolutionBackwardFilterWorkspaceSize) filter_workspace = nullptr;
  decltype(&cudnnConvolutionBackwardFilter) backward_filter = nullptr;
  decltype(&cudnnFindConvolutionForwardAlgorithmEx) find_forward = nullptr;
  decltype(&cudnnFindConvolutionBackwardDataAlgorithmEx) find_data = nullptr;
  decltype(&cudnnFindConvolutionBackwardFilterAlgorithmEx) find_filter = nullptr;
  // The graph API (cudnn_graph_plan.hpp).
  decltype(&cudnnBackendCreateDescriptor) backend_create = nullptr;
  decltype(&cudnnBackendDestroyDescriptor) backend_destroy = nullptr;
  decltype(&cudnnBackendSetAttribute) backend_set = nullptr;
  decltype(&cudnnBackendGetAttribute) backend_get = nullptr;
  decltype(&cudnnBackendFinalize) backend_finalize = nullptr;
  decltype(&cudnnBackendExecute) backend_execute = nullptr;
};

// libcudnn.so.<CUDNN_MAJOR> (else libcudnn.so), once per process; FailedPrecondition naming
// what dlopen or dlsym said when it cannot be loaded.
StatusOr<const CudnnLibrary*> cudnn_library();

}  // namespace troupe

#endif  // __has_include(<cudnn.h>)
