"""TensorFlow's step statistics and tf.RunMetadata (step_stats.proto, tensor_description.proto,
allocation_description.proto, config.proto's RunMetadata), with TensorFlow's field numbers, on
troupe's protobuf runtime (protobuf.py): what Session.run fills for a traced step
(tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)), what timeline.Timeline reads, and what
FileWriter.add_run_metadata writes for TensorBoard. The C++ side writes the same bytes
(devices/step_stats.hpp). troupe records node_name, all_start_micros, op_start_rel_micros,
op_end_rel_micros, all_end_rel_micros, timeline_label, thread_id and each output's dtype, shape
and bytes; the other fields stay at their defaults."""

from .graph_pb import DATA_TYPE_NAMES, GraphDef
from .protobuf import Message
from .summary_pb import TensorShapeProto


class AllocationDescription(Message):
    FIELDS = {
        "requested_bytes": (1, "int64", "optional"),
        "allocated_bytes": (2, "int64", "optional"),
        "allocator_name": (3, "string", "optional"),
        "allocation_id": (4, "int64", "optional"),
        "has_single_reference": (5, "bool", "optional"),
        "ptr": (6, "uint64", "optional"),
    }


class TensorDescription(Message):
    _ENUMS = {"dtype": DATA_TYPE_NAMES}
    FIELDS = {
        "dtype": (1, "enum", "optional"),
        "shape": (2, TensorShapeProto, "optional"),
        "allocation_description": (4, AllocationDescription, "optional"),
    }


class AllocationRecord(Message):
    FIELDS = {"alloc_micros": (1, "int64", "optional"), "alloc_bytes": (2, "int64", "optional")}


class AllocatorMemoryUsed(Message):
    FIELDS = {
        "allocator_name": (1, "string", "optional"),
        "total_bytes": (2, "int64", "optional"),
        "peak_bytes": (3, "int64", "optional"),
        "live_bytes": (4, "int64", "optional"),
        "allocator_bytes_in_use": (5, "int64", "optional"),
        "allocation_records": (6, AllocationRecord, "repeated"),
    }


class NodeOutput(Message):
    FIELDS = {"slot": (1, "int32", "optional"),
              "tensor_description": (3, TensorDescription, "optional")}


class MemoryStats(Message):
    FIELDS = {
        "temp_memory_size": (1, "int64", "optional"),
        "device_temp_memory_size": (2, "int64", "optional"),
        "persistent_memory_size": (3, "int64", "optional"),
        "device_persistent_memory_size": (4, "int64", "optional"),
        "persistent_tensor_alloc_ids": (5, "int64", "repeated"),
        "device_persistent_tensor_alloc_ids": (6, "int64", "repeated"),
    }


class NodeExecStats(Message):
    FIELDS = {
        "node_name": (1, "string", "optional"),
        "all_start_micros": (2, "int64", "optional"),
        "op_start_rel_micros": (3, "int64", "optional"),
        "op_end_rel_micros": (4, "int64", "optional"),
        "all_end_rel_micros": (5, "int64", "optional"),
        "memory": (6, AllocatorMemoryUsed, "repeated"),
        "output": (7, NodeOutput, "repeated"),
        "timeline_label": (8, "string", "optional"),
        "scheduled_micros": (9, "int64", "optional"),
        "thread_id": (10, "uint32", "optional"),
        "referenced_tensor": (11, AllocationDescription, "repeated"),
        "memory_stats": (12, MemoryStats, "optional"),
        "all_start_nanos": (13, "int64", "optional"),
        "op_start_rel_nanos": (14, "int64", "optional"),
        "op_end_rel_nanos": (15, "int64", "optional"),
        "all_end_rel_nanos": (16, "int64", "optional"),
        "scheduled_nanos": (17, "int64", "optional"),
    }


class DeviceStepStats(Message):
    FIELDS = {"device": (1, "string", "optional"),
              "node_stats": (2, NodeExecStats, "repeated")}


class StepStats(Message):
    FIELDS = {"dev_stats": (1, DeviceStepStats, "repeated")}


class RunMetadata(Message):
    """tf.RunMetadata: Session.run(..., run_metadata=m) fills step_stats when its options ask
    for a trace, and partition_graphs (one per device of the step: its _Send, _Recv, _Arg and
    _Retval nodes included) when they set output_partition_graphs."""

    FIELDS = {"step_stats": (1, StepStats, "optional"),
              "partition_graphs": (3, GraphDef, "repeated")}
