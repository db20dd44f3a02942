// Tensor <-> Cap'n Proto (schema/tensor.capnp).
//
// Writing can reference the tensor's buffer instead of copying it (the message then points at
// the tensor's memory; the caller keeps the tensor alive as long as the message). Reading uses
// the data in place, sharing the message's memory, when it is one chunk aligned for its
// element type; otherwise it copies into a fresh 64-byte aligned buffer. docs/wire.md counts
// the copies on each path.
#pragma once

#include <memory>

#include <capnp/message.h>
#include <kj/array.h>

#include "troupe/graph/core/partial_shape.hpp"
#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tensor.hpp"
#include "troupe/schema/tensor.capnp.h"

namespace troupe {

// The largest chunk of numeric data in one Data blob (Cap'n Proto caps a blob below 512 MiB).
inline constexpr size_t kWireChunkBytes = size_t{256} << 20;

enum class WireData {
  kCopy,       // copy the element bytes into the message
  kReference,  // point the message at the tensor's buffer (zero copy; a last chunk whose
               // size is not a multiple of 8 bytes is copied)
};

void tensor_to_wire(const Tensor& tensor, wire::Tensor::Builder out, capnp::Orphanage orphanage,
                    WireData mode);

// Decodes and validates (dtype, shape, byte count). An uninitialised Tensor (dtype kInvalid,
// no data) round-trips as itself: a dead value crossing devices. With a non-null `owner` that keeps
// the message's memory alive, the numeric data is used in place where possible.
StatusOr<Tensor> tensor_from_wire(wire::Tensor::Reader in, std::shared_ptr<const void> owner);

wire::DataType dtype_to_wire(DataType dtype);
StatusOr<DataType> dtype_from_wire(wire::DataType dtype);

void shape_to_wire(const PartialShape& shape, wire::TensorShape::Builder out);
PartialShape shape_from_wire(wire::TensorShape::Reader in);

// Traversal limit for a message of `words` words: its own size plus slack, so a hostile
// message cannot make a reader visit more than it holds (Cap'n Proto's default is 64 MiB,
// too small for large tensors).
uint64_t traversal_limit_for(size_t words);

// One tensor as the root of `message`, referencing the tensor's data where it can (no copy
// of whole words): `tensor` must outlive the message's use.
void build_tensor_message(const Tensor& tensor, capnp::MessageBuilder& message);

// One tensor as a flat message (copies the data once), and back (reads it in place).
kj::Array<capnp::word> serialize_tensor(const Tensor& tensor);
StatusOr<Tensor> parse_tensor(std::shared_ptr<const kj::Array<capnp::word>> flat);

}  // namespace troupe
