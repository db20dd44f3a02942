// Tensor <-> Cap'n Proto conversion with zero-copy write and in-place read.
#include "troupe/graph/core/tensor_codec.hpp"

#include <capnp/serialize.h>

namespace troupe {
namespace {

capnp::Data::Reader bytes_of(const void* data, size_t size) {
  return capnp::Data::Reader(static_cast<const kj::byte*>(data), size);
}

}  // namespace

wire::DataType dtype_to_wire(DataType dtype) {
  return static_cast<wire::DataType>(dtype);
}

StatusOr<DataType> dtype_from_wire(wire::DataType dtype) {
  auto value = static_cast<uint16_t>(dtype);
  if (value == 0 || value >= kNumDataTypes) {
    return errors::InvalidArgument("unknown dtype number {} on the wire", value);
  }
  return static_cast<DataType>(value);
}

void shape_to_wire(const PartialShape& shape, wire::TensorShape::Builder out) {
  out.setUnknownRank(!shape.rank_known());
  if (!shape.rank_known()) return;
  auto dims = out.initDims(shape.rank());
  for (int i = 0; i < shape.rank(); ++i)
    dims.set(i, shape.dim(i));
}

PartialShape shape_from_wire(wire::TensorShape::Reader in) {
  if (in.getUnknownRank()) return PartialShape::unknown();
  std::vector<int64_t> dims;
  for (int64_t d : in.getDims())
    dims.push_back(d < 0 ? PartialShape::kUnknownDim : d);
  return PartialShape(std::move(dims));
}

void tensor_to_wire(const Tensor& tensor, wire::Tensor::Builder out, capnp::Orphanage orphanage,
                    WireData mode) {
  out.setDtype(dtype_to_wire(tensor.dtype()));
  auto dims = out.initShape(tensor.rank());
  for (int i = 0; i < tensor.rank(); ++i)
    dims.set(i, tensor.dim(i));
  if (tensor.dtype() == DataType::kString) {
    auto strings = out.initStrings(tensor.num_elements());
    auto values = tensor.flat<std::string>();
    for (size_t i = 0; i < values.size(); ++i) {
      strings.set(i, bytes_of(values[i].data(), values[i].size()));
    }
    return;
  }
  size_t total = tensor.total_bytes();
  size_t count = (total + kWireChunkBytes - 1) / kWireChunkBytes;
  auto chunks = out.initChunks(count);
  const auto* base = static_cast<const char*>(tensor.raw_data());
  for (size_t i = 0; i < count; ++i) {
    size_t size = std::min(kWireChunkBytes, total - i * kWireChunkBytes);
    auto bytes = bytes_of(base + i * kWireChunkBytes, size);
    // Cap'n Proto references external data in whole words: a size that is not a multiple of
    // 8 would make it read past the end of the buffer when flattening, so that chunk (only
    // ever the last) is copied.
    if (mode == WireData::kReference && size % sizeof(capnp::word) == 0) {
      chunks.adopt(i, orphanage.referenceExternalData(bytes));
    } else {
      chunks.set(i, bytes);
    }
  }
}

StatusOr<Tensor> tensor_from_wire(wire::Tensor::Reader in, std::shared_ptr<const void> owner) {
  // An uninitialised Tensor (a dead value between devices, executor.hpp): no dtype, no data.
  if (in.getDtype() == wire::DataType::INVALID && in.getShape().size() == 0 &&
      in.getChunks().size() == 0 && in.getStrings().size() == 0) {
    return Tensor();
  }
  TROUPE_ASSIGN_OR_RETURN(DataType dtype, dtype_from_wire(in.getDtype()));
  std::vector<int64_t> dims;
  for (int64_t d : in.getShape())
    dims.push_back(d);
  TROUPE_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::from_dims(dims));
  int64_t count = shape.num_elements();

  if (dtype == DataType::kString) {
    auto strings = in.getStrings();
    if (static_cast<int64_t>(strings.size()) != count) {
      return errors::InvalidArgument("string tensor of shape {} carries {} strings, expected {}",
                                     shape.to_string(), strings.size(), count);
    }
    Tensor t(dtype, shape);
    auto out = t.flat<std::string>();
    for (size_t i = 0; i < strings.size(); ++i) {
      out[i].assign(reinterpret_cast<const char*>(strings[i].begin()), strings[i].size());
    }
    return t;
  }

  // Each chunk is read once: Cap'n Proto charges every read against the traversal limit.
  std::vector<capnp::Data::Reader> chunks;
  for (auto chunk : in.getChunks())
    chunks.push_back(chunk);
  size_t expected = count * dtype_size(dtype);
  size_t received = 0;
  for (const auto& chunk : chunks)
    received += chunk.size();
  if (received != expected) {
    return errors::InvalidArgument("{} tensor of shape {} carries {} bytes, expected {}",
                                   dtype_name(dtype), shape.to_string(), received, expected);
  }
  if (owner != nullptr && chunks.size() == 1 &&
      reinterpret_cast<uintptr_t>(chunks[0].begin()) % dtype_size(dtype) == 0) {
    return Tensor(dtype, shape, TensorBuffer::wrap(chunks[0].begin(), expected, std::move(owner)));
  }
  Tensor t(dtype, shape);
  auto* dest = static_cast<kj::byte*>(t.raw_data());
  for (const auto& chunk : chunks) {
    if (chunk.size() == 0) continue;  // memcpy from an empty blob's null pointer is undefined
    std::memcpy(dest, chunk.begin(), chunk.size());
    dest += chunk.size();
  }
  return t;
}

uint64_t traversal_limit_for(size_t words) {
  return words + 1024;
}

void build_tensor_message(const Tensor& tensor, capnp::MessageBuilder& message) {
  auto root = message.initRoot<wire::Tensor>();
  tensor_to_wire(tensor, root, message.getOrphanage(), WireData::kReference);
}

kj::Array<capnp::word> serialize_tensor(const Tensor& tensor) {
  capnp::MallocMessageBuilder message;
  build_tensor_message(tensor, message);
  return capnp::messageToFlatArray(message);
}

StatusOr<Tensor> parse_tensor(std::shared_ptr<const kj::Array<capnp::word>> flat) {
  try {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = traversal_limit_for(flat->size());
    capnp::FlatArrayMessageReader reader(flat->asPtr(), options);
    return tensor_from_wire(reader.getRoot<wire::Tensor>(), flat);
  } catch (const kj::Exception& e) {
    return errors::InvalidArgument("malformed tensor message: {}", e.getDescription().cStr());
  }
}

}  // namespace troupe
