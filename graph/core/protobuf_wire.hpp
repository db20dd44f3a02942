// The protocol buffer wire format, by hand: the few TensorFlow messages troupe writes and reads
// (summaries, events, graph and example records) are encoded field by field with these, with
// no protobuf library (https://protobuf.dev/programming-guides/encoding/).
//
// Writing appends to a std::string: put_varint, put_key and one put_* per field type. A
// message inside a message is encoded on its own and written with put_bytes. proto3 leaves
// out fields at their zero value; callers decide (a oneof member is always written).
//
// ProtoReader walks one message's bytes field by field; every read is bounded by the message
// and reports a malformed message as DataLoss naming `what` and the byte offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/graph/core/status.hpp"

namespace troupe::proto {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// The low `bytes` bytes of `v`, little-endian: fixed32/fixed64 fields (and TFRecord's
// framing, graph/core/tfrecord.cpp).
void put_le(std::string& out, uint64_t v, int bytes);
uint64_t get_le(const char* p, int bytes);

void put_varint(std::string& out, uint64_t value);
void put_key(std::string& out, uint32_t field, WireType type);
// int32, int64, uint64, bool and enum fields: a varint (a negative int as ten bytes).
void put_int(std::string& out, uint32_t field, int64_t value);
void put_double(std::string& out, uint32_t field, double value);
void put_float(std::string& out, uint32_t field, float value);
// string, bytes and embedded message fields.
void put_bytes(std::string& out, uint32_t field, std::string_view bytes);
// A packed repeated double field (proto3's encoding of `repeated double`).
void put_packed_doubles(std::string& out, uint32_t field, const std::vector<double>& values);
void put_packed_ints(std::string& out, uint32_t field, const std::vector<int64_t>& values);

class ProtoReader {
 public:
  // `what` names the message in errors ("event file x.tfevents, record 3"); not copied.
  ProtoReader(std::string_view data, const std::string& what) : data_(data), what_(what) {}

  bool done() const { return pos_ >= data_.size(); }
  size_t position() const { return pos_; }

  Status read_key(uint32_t* field, uint32_t* type);
  // A one-byte varint (the common case: small numbers, field keys) inline; longer ones in
  // read_long_varint.
  Status read_varint(uint64_t* value) {
    if (pos_ < data_.size()) {
      const auto b = static_cast<uint8_t>(data_[pos_]);
      if (b < 0x80) {
        ++pos_;
        *value = b;
        return Status::OK();
      }
    }
    return read_long_varint(value);
  }
  // `bytes` is 4 or 8: a fixed32 or fixed64 field's little-endian value.
  Status read_fixed(int bytes, uint64_t* value);
  Status read_bytes(std::string_view* out);
  // Skips a field of wire type `type`.
  Status skip(uint32_t type);
  // DataLoss unless a known field has the wire type it should.
  Status expect(uint32_t field, uint32_t type, uint32_t expected) const;
  Status corrupt(const std::string& why) const;

 private:
  Status read_long_varint(uint64_t* value);

  std::string_view data_;
  const std::string& what_;
  size_t pos_ = 0;
};

}  // namespace troupe::proto
