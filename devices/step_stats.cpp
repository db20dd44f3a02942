// Step statistics in TensorFlow's wire format (contract in step_stats.hpp).
#include "troupe/devices/step_stats.hpp"

#include "troupe/graph/core/protobuf_wire.hpp"
#include "troupe/graph/core/tensor_proto.hpp"

namespace troupe {
namespace {

// StepStats and the messages inside it: field numbers of step_stats.proto,
// tensor_description.proto, allocation_description.proto and tensor_shape.proto.
namespace field {
constexpr uint32_t kDevStats = 1;
constexpr uint32_t kDevice = 1, kNodeStats = 2;
constexpr uint32_t kNodeName = 1, kAllStart = 2, kOpStartRel = 3, kOpEndRel = 4, kAllEndRel = 5,
                   kOutput = 7, kTimelineLabel = 8, kThreadId = 10;
constexpr uint32_t kSlot = 1, kTensorDescription = 3;
constexpr uint32_t kDtype = 1, kShape = 2, kAllocationDescription = 4;
constexpr uint32_t kRequestedBytes = 1, kAllocatedBytes = 2, kAllocatorName = 3;
constexpr uint32_t kDim = 2, kDimSize = 1;
}  // namespace field

std::string encode_output(const NodeOutputStats& output) {
  std::string shape;
  for (int64_t size : output.shape) {
    std::string dim;
    proto::put_int(dim, field::kDimSize, size);
    proto::put_bytes(shape, field::kDim, dim);
  }
  std::string allocation;
  proto::put_int(allocation, field::kRequestedBytes, output.bytes);
  proto::put_int(allocation, field::kAllocatedBytes, output.bytes);
  if (!output.allocator_name.empty()) {
    proto::put_bytes(allocation, field::kAllocatorName, output.allocator_name);
  }
  std::string description;
  if (output.dtype != DataType::kInvalid) {
    proto::put_int(description, field::kDtype, tensorflow_dtype_number(output.dtype));
  }
  proto::put_bytes(description, field::kShape, shape);
  if (output.bytes > 0) proto::put_bytes(description, field::kAllocationDescription, allocation);
  std::string out;
  if (output.slot != 0) proto::put_int(out, field::kSlot, output.slot);
  proto::put_bytes(out, field::kTensorDescription, description);
  return out;
}

std::string encode_node(const NodeExecStats& node) {
  std::string out;
  proto::put_bytes(out, field::kNodeName, node.node_name);
  proto::put_int(out, field::kAllStart, node.all_start_micros);
  if (node.op_start_rel_micros != 0) {
    proto::put_int(out, field::kOpStartRel, node.op_start_rel_micros);
  }
  if (node.op_end_rel_micros != 0) proto::put_int(out, field::kOpEndRel, node.op_end_rel_micros);
  if (node.all_end_rel_micros != 0) {
    proto::put_int(out, field::kAllEndRel, node.all_end_rel_micros);
  }
  for (const NodeOutputStats& output : node.outputs)
    proto::put_bytes(out, field::kOutput, encode_output(output));
  if (!node.timeline_label.empty()) {
    proto::put_bytes(out, field::kTimelineLabel, node.timeline_label);
  }
  if (node.thread_id != 0) proto::put_int(out, field::kThreadId, node.thread_id);
  return out;
}

DataType dtype_of_number(uint64_t number) {
  for (int d = 0; d < kNumDataTypes; ++d) {
    auto dtype = static_cast<DataType>(d);
    if (static_cast<uint64_t>(tensorflow_dtype_number(dtype)) == number) return dtype;
  }
  return DataType::kInvalid;
}

// Calls `on_field(field, type, reader)` for each field of `bytes`; it reads the field's value
// (or returns an error). Fields it does not read are skipped.
template <class OnField>
Status read_message(std::string_view bytes, const std::string& what, OnField on_field) {
  proto::ProtoReader reader(bytes, what);
  while (!reader.done()) {
    uint32_t number = 0, type = 0;
    TROUPE_RETURN_IF_ERROR(reader.read_key(&number, &type));
    bool read = false;
    TROUPE_RETURN_IF_ERROR(on_field(number, type, reader, &read));
    if (!read) TROUPE_RETURN_IF_ERROR(reader.skip(type));
  }
  return Status::OK();
}

Status read_int(proto::ProtoReader& reader, uint32_t number, uint32_t type, int64_t* value,
                bool* read) {
  TROUPE_RETURN_IF_ERROR(reader.expect(number, type, proto::kVarint));
  uint64_t raw = 0;
  TROUPE_RETURN_IF_ERROR(reader.read_varint(&raw));
  *value = static_cast<int64_t>(raw);
  *read = true;
  return Status::OK();
}

Status read_string(proto::ProtoReader& reader, uint32_t number, uint32_t type, std::string* value,
                   bool* read) {
  TROUPE_RETURN_IF_ERROR(reader.expect(number, type, proto::kLengthDelimited));
  std::string_view bytes;
  TROUPE_RETURN_IF_ERROR(reader.read_bytes(&bytes));
  value->assign(bytes);
  *read = true;
  return Status::OK();
}

Status decode_output(std::string_view bytes, const std::string& what, NodeOutputStats* output) {
  return read_message(bytes, what, [&](uint32_t number, uint32_t type, auto& reader, bool* read) {
    if (number == field::kSlot) {
      int64_t slot = 0;
      TROUPE_RETURN_IF_ERROR(read_int(reader, number, type, &slot, read));
      output->slot = static_cast<int32_t>(slot);
      return Status::OK();
    }
    if (number != field::kTensorDescription) return Status::OK();
    std::string description;
    TROUPE_RETURN_IF_ERROR(read_string(reader, number, type, &description, read));
    return read_message(description, what, [&](uint32_t n, uint32_t t, auto& inner, bool* done) {
      std::string sub;
      int64_t dtype = 0;
      switch (n) {
        case field::kDtype:
          TROUPE_RETURN_IF_ERROR(read_int(inner, n, t, &dtype, done));
          output->dtype = dtype_of_number(static_cast<uint64_t>(dtype));
          return Status::OK();
        case field::kShape:
          TROUPE_RETURN_IF_ERROR(read_string(inner, n, t, &sub, done));
          return read_message(sub, what, [&](uint32_t dn, uint32_t dt, auto& dims, bool* d) {
            if (dn != field::kDim) return Status::OK();
            std::string dim;
            TROUPE_RETURN_IF_ERROR(read_string(dims, dn, dt, &dim, d));
            int64_t size = 0;  // proto3 leaves a size of 0 out
            TROUPE_RETURN_IF_ERROR(
                read_message(dim, what, [&](uint32_t sn, uint32_t st, auto& r, bool* s) {
                  return sn == field::kDimSize ? read_int(r, sn, st, &size, s) : Status::OK();
                }));
            output->shape.push_back(size);
            return Status::OK();
          });
        case field::kAllocationDescription:
          TROUPE_RETURN_IF_ERROR(read_string(inner, n, t, &sub, done));
          return read_message(sub, what, [&](uint32_t an, uint32_t at, auto& r, bool* a) {
            if (an == field::kAllocatorName) {
              return read_string(r, an, at, &output->allocator_name, a);
            }
            return an == field::kRequestedBytes ? read_int(r, an, at, &output->bytes, a)
                                                : Status::OK();
          });
        default:
          return Status::OK();
      }
    });
  });
}

Status decode_node(std::string_view bytes, const std::string& what, NodeExecStats* node) {
  return read_message(bytes, what, [&](uint32_t number, uint32_t type, auto& reader, bool* read) {
    switch (number) {
      case field::kNodeName:
        return read_string(reader, number, type, &node->node_name, read);
      case field::kAllStart:
        return read_int(reader, number, type, &node->all_start_micros, read);
      case field::kOpStartRel:
        return read_int(reader, number, type, &node->op_start_rel_micros, read);
      case field::kOpEndRel:
        return read_int(reader, number, type, &node->op_end_rel_micros, read);
      case field::kAllEndRel:
        return read_int(reader, number, type, &node->all_end_rel_micros, read);
      case field::kTimelineLabel:
        return read_string(reader, number, type, &node->timeline_label, read);
      case field::kThreadId: {
        int64_t id = 0;
        TROUPE_RETURN_IF_ERROR(read_int(reader, number, type, &id, read));
        node->thread_id = static_cast<uint32_t>(id);
        return Status::OK();
      }
      case field::kOutput: {
        std::string output;
        TROUPE_RETURN_IF_ERROR(read_string(reader, number, type, &output, read));
        node->outputs.emplace_back();
        return decode_output(output, what, &node->outputs.back());
      }
      default:
        return Status::OK();
    }
  });
}

}  // namespace

std::string encode_step_stats(const std::vector<DeviceStepStats>& devices) {
  std::string out;
  for (const DeviceStepStats& device : devices) {
    std::string dev;
    proto::put_bytes(dev, field::kDevice, device.device);
    for (const NodeExecStats& node : device.node_stats)
      proto::put_bytes(dev, field::kNodeStats, encode_node(node));
    proto::put_bytes(out, field::kDevStats, dev);
  }
  return out;
}

uint64_t approximate_message_bytes(const DeviceStepStats& device) {
  uint64_t bytes = device.device.size() + 16;
  for (const NodeExecStats& node : device.node_stats) {
    bytes += node.node_name.size() + node.timeline_label.size() + 64;
    for (const NodeOutputStats& output : node.outputs)
      bytes += output.allocator_name.size() + 8 * output.shape.size() + 40;
  }
  return bytes;
}

StatusOr<std::vector<DeviceStepStats>> decode_step_stats(std::string_view bytes,
                                                         const std::string& what) {
  std::vector<DeviceStepStats> devices;
  TROUPE_RETURN_IF_ERROR(
      read_message(bytes, what, [&](uint32_t number, uint32_t type, auto& reader, bool* read) {
        if (number != field::kDevStats) return Status::OK();
        std::string dev;
        TROUPE_RETURN_IF_ERROR(read_string(reader, number, type, &dev, read));
        DeviceStepStats device;
        TROUPE_RETURN_IF_ERROR(
            read_message(dev, what, [&](uint32_t n, uint32_t t, auto& inner, bool* done) {
              if (n == field::kDevice) return read_string(inner, n, t, &device.device, done);
              if (n != field::kNodeStats) return Status::OK();
              std::string node;
              TROUPE_RETURN_IF_ERROR(read_string(inner, n, t, &node, done));
              device.node_stats.emplace_back();
              return decode_node(node, what, &device.node_stats.back());
            }));
        devices.push_back(std::move(device));
        return Status::OK();
      }));
  return devices;
}

}  // namespace troupe
