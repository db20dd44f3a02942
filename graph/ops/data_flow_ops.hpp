// Builders for queues (FIFOQueue and its enqueue, dequeue, close and size ops) and gradient
// accumulators for synchronous training (ConditionalAccumulator and its ops).
//
// A queue lives on the device of its FIFOQueue node; the other ops take its handle (a
// reference) and run there. A dequeue from an empty queue waits for an enqueue — in the same
// step or another — until the queue is closed (OutOfRange) or the step is cancelled (e.g. by
// Session::close(), or its timeout).
#pragma once

#include <vector>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

struct FIFOQueueOptions {
  std::vector<PartialShape> shapes;  // per component; empty: any shapes
  int64_t capacity = -1;             // -1: unbounded; enqueues wait while full
  std::string container;
  std::string shared_name;  // queues with the same container and shared_name are one queue
};
Output FIFOQueue(const Scope& scope, const std::vector<DataType>& component_types,
                 FIFOQueueOptions options = {});
Operation QueueEnqueue(const Scope& scope, const Input& handle,
                       const std::vector<Input>& components);
std::vector<Output> QueueDequeue(const Scope& scope, const Input& handle,
                                 const std::vector<DataType>& component_types);
// Later enqueues fail (Cancelled); dequeues fail (OutOfRange) once the queue is empty.
Operation QueueClose(const Scope& scope, const Input& handle, bool cancel_pending_enqueues = false);
Output QueueSize(const Scope& scope, const Input& handle);  // int32 scalar

// Sums gradients for one variable; lives on the device of its node (put it with the variable).
// `sparse`: a SparseConditionalAccumulator, for IndexedSlices (SparseAccumulatorApplyGradient,
// SparseAccumulatorTakeGradient).
struct ConditionalAccumulatorOptions {
  std::string container;
  std::string shared_name;
  std::string reduction_type = "MEAN";  // or "SUM"
  bool sparse = false;
};
Output ConditionalAccumulator(const Scope& scope, DataType dtype, const PartialShape& shape,
                              ConditionalAccumulatorOptions options = {});
// Adds `gradient`, computed at `local_step` (int64); dropped if older than the accumulator's step.
Operation AccumulatorApplyGradient(const Scope& scope, const Input& handle, const Input& local_step,
                                   const Input& gradient);
// Waits for `num_required` (int32) gradients and outputs their average; resets the sum and
// advances the accumulator's step.
Output AccumulatorTakeGradient(const Scope& scope, const Input& handle, const Input& num_required,
                               DataType dtype);
// Adds a sparse gradient (int64 indices, values [n] + row shape, int64 dense shape used when
// has_known_shape) computed at `local_step`; dropped if older than the accumulator's step.
Operation SparseAccumulatorApplyGradient(const Scope& scope, const Input& handle,
                                         const Input& local_step, const Input& indices,
                                         const Input& values, const Input& dense_shape,
                                         bool has_known_shape);
struct SparseAccumulatorTake {
  Output indices;      // int64 [n], increasing
  Output values;       // each row's average over the gradients that had it
  Output dense_shape;  // int64
};
// Waits for `num_required` sparse gradients and outputs their average as IndexedSlices parts.
SparseAccumulatorTake SparseAccumulatorTakeGradient(const Scope& scope, const Input& handle,
                                                    const Input& num_required, DataType dtype);
Operation AccumulatorSetGlobalStep(const Scope& scope, const Input& handle,
                                   const Input& new_global_step);
Output AccumulatorNumAccumulated(const Scope& scope, const Input& handle);  // int32 scalar

}  // namespace troupe::ops
