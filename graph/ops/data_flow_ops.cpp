// Queue ops: definitions and builders.
#include "troupe/graph/ops/data_flow_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {

namespace {

// What every queue op checks of its attributes; its output, the handle, is a scalar.
Status queue_shape(InferenceContext& c) {
  const auto& types = c.attr<std::vector<DataType>>("component_types");
  const auto& shapes = c.attr<std::vector<PartialShape>>("shapes");
  if (types.empty()) return c.invalid("component_types is empty");
  if (!shapes.empty() && shapes.size() != types.size()) {
    return c.invalid("{} shapes for {} component types", shapes.size(), types.size());
  }
  const int64_t capacity = c.attr<int64_t>("capacity");
  if (capacity == 0 || capacity < -1) {
    return c.invalid("capacity must be -1 (unbounded) or > 0, got {}", capacity);
  }
  c.set_output(0, PartialShape::scalar());
  return Status::OK();
}

}  // namespace

void register_data_flow_ops(OpRegistry& r) {
  // A queue op: its handle and the attributes every queue has.
  auto queue = [&](const char* name) {
    return OpDefBuilder(name)
        .output("handle: Ref(string)")
        .attr("component_types: list(type)")
        .attr("shapes: list(shape) = []")
        .attr("capacity: int = -1")
        .attr("container: string = \"\"")
        .attr("shared_name: string = \"\"")
        .stateful();
  };
  // FIFOQueue, and PaddingFIFOQueue (its dequeues of many pad: devices/tuple_queue.hpp).
  must_register(r, queue("FIFOQueue").shape_fn(queue_shape));
  must_register(r, queue("PaddingFIFOQueue").shape_fn(queue_shape));
  must_register(r, queue("RandomShuffleQueue")
                       .attr("min_after_dequeue: int = 0")
                       .attr("seed: int = 0")
                       .attr("seed2: int = 0")
                       .shape_fn([](InferenceContext& c) -> Status {
                         TROUPE_RETURN_IF_ERROR(queue_shape(c));
                         const int64_t capacity = c.attr<int64_t>("capacity");
                         const int64_t keep = c.attr<int64_t>("min_after_dequeue");
                         if (keep < 0 || (capacity > 0 && keep >= capacity)) {
                           return c.invalid(
                               "min_after_dequeue ({}) must be >= 0 and below capacity ({})", keep,
                               capacity);
                         }
                         return Status::OK();
                       }));
  must_register(r, OpDefBuilder("QueueEnqueueMany")
                       .input("handle: Ref(string)")
                       .input("components: Tcomponents")
                       .attr("Tcomponents: list(type)")
                       .stateful()
                       .shape_fn(shapes::no_outputs));
  for (const char* name : {"QueueDequeueMany", "QueueDequeueUpTo"}) {
    must_register(r, OpDefBuilder(name)
                         .input("handle: Ref(string)")
                         .input("n: int32")
                         .output("components: component_types")
                         .attr("component_types: list(type)")
                         .stateful()
                         .shape_fn(shapes::unknown));
  }
  must_register(r, OpDefBuilder("QueueEnqueue")
                       .input("handle: Ref(string)")
                       .input("components: Tcomponents")
                       .attr("Tcomponents: list(type)")
                       .stateful()
                       .shape_fn(shapes::no_outputs));
  must_register(r, OpDefBuilder("QueueDequeue")
                       .input("handle: Ref(string)")
                       .output("components: component_types")
                       .attr("component_types: list(type)")
                       .stateful()
                       .shape_fn(shapes::unknown));
  must_register(r, OpDefBuilder("QueueClose")
                       .input("handle: Ref(string)")
                       .attr("cancel_pending_enqueues: bool = false")
                       .stateful()
                       .shape_fn(shapes::no_outputs));
  // Accumulators of dense and of sparse gradients (SyncReplicasOptimizer's); SetGlobalStep and
  // NumAccumulated take either. reduction_type: "MEAN" or "SUM".
  for (const char* name : {"ConditionalAccumulator", "SparseConditionalAccumulator"}) {
    must_register(r, OpDefBuilder(name)
                         .output("handle: Ref(string)")
                         .attr("dtype: {float32, float64}")
                         .attr("shape: shape")
                         .attr("container: string = \"\"")
                         .attr("shared_name: string = \"\"")
                         .attr("reduction_type: string = \"MEAN\"")
                         .stateful()
                         .shape_fn(shapes::scalar));
  }
  must_register(r, OpDefBuilder("SparseAccumulatorApplyGradient")
                       .input("handle: Ref(string)")
                       .input("local_step: int64")
                       .input("gradient_indices: int64")
                       .input("gradient_values: dtype")
                       .input("gradient_shape: int64")
                       .attr("dtype: {float32, float64}")
                       .attr("has_known_shape: bool")
                       .stateful()
                       .shape_fn(shapes::no_outputs));
  must_register(r, OpDefBuilder("SparseAccumulatorTakeGradient")
                       .input("handle: Ref(string)")
                       .input("num_required: int32")
                       .output("indices: int64")
                       .output("values: dtype")
                       .output("shape: int64")
                       .attr("dtype: {float32, float64}")
                       .stateful()
                       .shape_fn([](InferenceContext& c) -> Status {
                         c.set_output(0, PartialShape({-1}));
                         c.set_output(1, PartialShape::unknown());
                         c.set_output(2, PartialShape({-1}));
                         return Status::OK();
                       }));
  must_register(r, OpDefBuilder("AccumulatorApplyGradient")
                       .input("handle: Ref(string)")
                       .input("local_step: int64")
                       .input("gradient: dtype")
                       .attr("dtype: {float32, float64}")
                       .stateful()
                       .shape_fn(shapes::no_outputs));
  must_register(r, OpDefBuilder("AccumulatorTakeGradient")
                       .input("handle: Ref(string)")
                       .input("num_required: int32")
                       .output("average: dtype")
                       .attr("dtype: {float32, float64}")
                       .stateful()
                       .shape_fn(shapes::unknown));
  must_register(r, OpDefBuilder("AccumulatorSetGlobalStep")
                       .input("handle: Ref(string)")
                       .input("new_global_step: int64")
                       .stateful()
                       .shape_fn(shapes::no_outputs));
  must_register(r, OpDefBuilder("AccumulatorNumAccumulated")
                       .input("handle: Ref(string)")
                       .output("num_accumulated: int32")
                       .stateful()
                       .shape_fn(shapes::scalar));
  // Readers (TensorFlow's io_ops): each reads the files whose names it takes from a queue.
  auto reader = [&](const char* name) {
    return OpDefBuilder(name)
        .output("reader_handle: Ref(string)")
        .attr("container: string = \"\"")
        .attr("shared_name: string = \"\"")
        .stateful()
        .shape_fn(shapes::scalar);
  };
  must_register(r, reader("TFRecordReader").attr("compression_type: string = \"\""));
  must_register(r, reader("TextLineReader").attr("skip_header_lines: int = 0"));
  must_register(r, reader("FixedLengthRecordReader")
                       .attr("header_bytes: int = 0")
                       .attr("record_bytes: int")
                       .attr("footer_bytes: int = 0")
                       .attr("hop_bytes: int = 0"));
  must_register(r, reader("WholeFileReader"));
  must_register(r, OpDefBuilder("ReaderRead")
                       .input("reader_handle: Ref(string)")
                       .input("queue_handle: Ref(string)")
                       .output("key: string")
                       .output("value: string")
                       .stateful()
                       .shape_fn([](InferenceContext& c) -> Status {
                         c.set_output(0, PartialShape::scalar());
                         c.set_output(1, PartialShape::scalar());
                         return Status::OK();
                       }));
  must_register(r, OpDefBuilder("ReaderReadUpTo")
                       .input("reader_handle: Ref(string)")
                       .input("queue_handle: Ref(string)")
                       .input("num_records: int64")
                       .output("keys: string")
                       .output("values: string")
                       .stateful()
                       .shape_fn([](InferenceContext& c) -> Status {
                         c.set_output(0, PartialShape({-1}));
                         c.set_output(1, PartialShape({-1}));
                         return Status::OK();
                       }));
  must_register(r, OpDefBuilder("ReaderNumRecordsProduced")
                       .input("reader_handle: Ref(string)")
                       .output("records_produced: int64")
                       .stateful()
                       .shape_fn(shapes::scalar));
  must_register(r, OpDefBuilder("ReaderNumWorkUnitsCompleted")
                       .input("reader_handle: Ref(string)")
                       .output("units_completed: int64")
                       .stateful()
                       .shape_fn(shapes::scalar));
  must_register(r, OpDefBuilder("ReaderReset")
                       .input("reader_handle: Ref(string)")
                       .stateful()
                       .shape_fn(shapes::no_outputs));
  must_register(r, OpDefBuilder("QueueSize")
                       .input("handle: Ref(string)")
                       .output("size: int32")
                       .stateful()
                       .shape_fn(shapes::scalar));
}

namespace ops {

Output FIFOQueue(const Scope& s, const std::vector<DataType>& component_types, FIFOQueueOptions o) {
  return NodeBuilder(s, "FIFOQueue")
      .attr("component_types", component_types)
      .attr("shapes", o.shapes)
      .attr("capacity", o.capacity)
      .attr("container", o.container)
      .attr("shared_name", o.shared_name)
      .finalize();
}

Operation QueueEnqueue(const Scope& s, const Input& handle, const std::vector<Input>& components) {
  return NodeBuilder(s, "QueueEnqueue").input(handle).input_list(components).finalize();
}

std::vector<Output> QueueDequeue(const Scope& s, const Input& handle,
                                 const std::vector<DataType>& component_types) {
  Operation op = NodeBuilder(s, "QueueDequeue")
                     .input(handle)
                     .attr("component_types", component_types)
                     .finalize();
  std::vector<Output> outputs;
  if (!op.valid()) return outputs;
  for (int i = 0; i < op.num_outputs(); ++i)
    outputs.emplace_back(op, i);
  return outputs;
}

Operation QueueClose(const Scope& s, const Input& handle, bool cancel_pending_enqueues) {
  return NodeBuilder(s, "QueueClose")
      .input(handle)
      .attr("cancel_pending_enqueues", cancel_pending_enqueues)
      .finalize();
}

Output QueueSize(const Scope& s, const Input& handle) {
  return NodeBuilder(s, "QueueSize").input(handle).finalize();
}

Output ConditionalAccumulator(const Scope& s, DataType dtype, const PartialShape& shape,
                              ConditionalAccumulatorOptions o) {
  return NodeBuilder(s, o.sparse ? "SparseConditionalAccumulator" : "ConditionalAccumulator")
      .attr("dtype", dtype)
      .attr("shape", shape)
      .attr("container", o.container)
      .attr("shared_name", o.shared_name)
      .attr("reduction_type", o.reduction_type)
      .finalize();
}

Operation SparseAccumulatorApplyGradient(const Scope& s, const Input& handle,
                                         const Input& local_step, const Input& indices,
                                         const Input& values, const Input& dense_shape,
                                         bool has_known_shape) {
  return NodeBuilder(s, "SparseAccumulatorApplyGradient")
      .input(handle)
      .input(local_step)
      .input(indices)
      .input(values)
      .input(dense_shape)
      .attr("has_known_shape", has_known_shape)
      .finalize();
}

SparseAccumulatorTake SparseAccumulatorTakeGradient(const Scope& s, const Input& handle,
                                                    const Input& num_required, DataType dtype) {
  Operation op = NodeBuilder(s, "SparseAccumulatorTakeGradient")
                     .input(handle)
                     .input(num_required)
                     .attr("dtype", dtype)
                     .finalize();
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1), Output(op, 2)};
}

Operation AccumulatorApplyGradient(const Scope& s, const Input& handle, const Input& local_step,
                                   const Input& gradient) {
  return NodeBuilder(s, "AccumulatorApplyGradient")
      .input(handle)
      .input(local_step)
      .input(gradient)
      .finalize();
}

Output AccumulatorTakeGradient(const Scope& s, const Input& handle, const Input& num_required,
                               DataType dtype) {
  return NodeBuilder(s, "AccumulatorTakeGradient")
      .input(handle)
      .input(num_required)
      .attr("dtype", dtype)
      .finalize();
}

Operation AccumulatorSetGlobalStep(const Scope& s, const Input& handle,
                                   const Input& new_global_step) {
  return NodeBuilder(s, "AccumulatorSetGlobalStep").input(handle).input(new_global_step).finalize();
}

Output AccumulatorNumAccumulated(const Scope& s, const Input& handle) {
  return NodeBuilder(s, "AccumulatorNumAccumulated").input(handle).finalize();
}

}  // namespace ops
}  // namespace troupe
