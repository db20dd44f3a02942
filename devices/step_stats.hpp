// Step statistics: when and where each node of a traced step ran, and what it produced —
// TensorFlow's StepStats (step_stats.proto), which RunMetadata carries back to the client when
// a step runs with RunOptions::trace_level above kNoTrace, and which timelines and
// tf.train.ProfilerHook turn into Chrome traces.
//
// The executor records a NodeExecStats per node it runs (StepContext::stats); a device actor
// answers a traced partition with its DeviceStepStats; the master session gathers one per
// device into RunMetadata::step_stats. Times are microseconds: the start on the wall clock
// (since the Unix epoch, so the devices of several hosts share a time line, as far as their
// clocks agree), the rest relative to it on a steady clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/types.hpp"

namespace troupe {

// Output `slot` of a node: its dtype, shape and bytes (TensorFlow's NodeOutput with its
// TensorDescription).
struct NodeOutputStats {
  int32_t slot = 0;
  DataType dtype = DataType::kInvalid;
  std::vector<int64_t> shape;
  int64_t bytes = 0;           // the element bytes of the tensor (0 for a dead or unset output)
  std::string allocator_name;  // where it lives: "cpu", or "gpu" for a GPU device's memory
};

struct NodeExecStats {
  std::string node_name;
  // TensorFlow's label: "name = Op(input, input, ...)" (timelines read the op and inputs).
  std::string timeline_label;
  int64_t all_start_micros = 0;     // when the node was started (wall clock)
  int64_t op_start_rel_micros = 0;  // its kernel's start, after all_start_micros
  int64_t op_end_rel_micros = 0;    // its kernel's end (an async kernel: its completion)
  int64_t all_end_rel_micros = 0;   // when its outputs were handed on
  uint32_t thread_id = 0;           // the thread that started it
  std::vector<NodeOutputStats> outputs;
};

struct DeviceStepStats {
  std::string device;  // the device's full name
  std::vector<NodeExecStats> node_stats;
};

// TensorFlow's RunOptions.TraceLevel (config.proto): troupe records the same statistics for
// each level above kNoTrace (it has no hardware counters).
enum class TraceLevel : int32_t {
  kNoTrace = 0,
  kSoftwareTrace = 1,
  kHardwareTrace = 2,
  kFullTrace = 3,
};

// TensorFlow's StepStats message (step_stats.proto), encoded and decoded by hand
// (graph/core/protobuf_wire.hpp): dev_stats = 1 { device = 1, node_stats = 2 { node_name = 1,
// all_start_micros = 2, op_start_rel_micros = 3, op_end_rel_micros = 4, all_end_rel_micros = 5,
// output = 7 { slot = 1, tensor_description = 3 { dtype = 1, shape = 2,
// allocation_description = 4 { requested_bytes = 1, allocated_bytes = 2, allocator_name = 3 }}},
// timeline_label = 8, thread_id = 10 } }. So a Python program's tf.RunMetadata holds what
// TensorFlow's would, and TensorBoard reads what FileWriter.add_run_metadata writes. Decoding
// skips the fields troupe does not record; a malformed message is DataLoss naming `what`.
std::string encode_step_stats(const std::vector<DeviceStepStats>& devices);

// About how many bytes `device` takes in an actor message (its strings and numbers), for the
// message size limit.
uint64_t approximate_message_bytes(const DeviceStepStats& device);
StatusOr<std::vector<DeviceStepStats>> decode_step_stats(std::string_view bytes,
                                                         const std::string& what);

}  // namespace troupe
