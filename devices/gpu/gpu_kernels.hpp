// The kernels of the GPU device ("GPU"), registered beside the CPU's when troupe is built with
// CUDA.
//
// What runs where on a GPU device:
//   - float32 values live in GPU memory, and the ops the MLP and sparse-free models train with
//     have CUDA kernels for them (MatMul on cuBLAS; Conv2D and its two backprops as cuBLAS
//     products on im2col patches, as the CPU's; MaxPool and MaxPoolGrad; element-wise and
//     broadcasting arithmetic,
//     Sum/Mean, BiasAdd and its gradient, Relu/Sigmoid/Tanh and their gradients, Softmax,
//     SparseSoftmaxCrossEntropyWithLogits, Fill/ZerosLike/OnesLike/BroadcastTo/AddN, Assign,
//     AssignAdd/AssignSub and the Apply updates of GradientDescent, Momentum, Adagrad and Adam);
//   - every other dtype lives in host memory, and the same ops on it, and the shape ops (Shape,
//     Size, Rank, BroadcastGradientArgs, Cast, ArgMax, comparisons), run their CPU kernels on the
//     host beside the GPU (host_kernel.hpp), as TensorFlow's HostMemory arguments do;
//   - a case a CUDA kernel does not handle (a rank above 6, a bad shape) runs the CPU kernel on
//     host copies, which also gives the CPU kernel's error;
//   - ops with no kernel here are placed on a CPU by soft placement, and are an error naming the
//     op with hard placement (graph/placement.hpp).
#pragma once

#include "troupe/devices/kernel_registry.hpp"

namespace troupe {

inline constexpr const char* kGpu = "GPU";

void register_gpu_kernels(KernelRegistry& registry);

}  // namespace troupe
