// The protocol buffer wire format: varints, keys, fixed and length-delimited fields.
#include "troupe/graph/core/protobuf_wire.hpp"

#include <bit>

#include <fmt/format.h>

namespace troupe::proto {

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void put_key(std::string& out, uint32_t field, WireType type) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | type);
}

void put_int(std::string& out, uint32_t field, int64_t value) {
  put_key(out, field, kVarint);
  put_varint(out, static_cast<uint64_t>(value));
}

void put_double(std::string& out, uint32_t field, double value) {
  put_key(out, field, kFixed64);
  put_le(out, std::bit_cast<uint64_t>(value), 8);
}

void put_float(std::string& out, uint32_t field, float value) {
  put_key(out, field, kFixed32);
  put_le(out, std::bit_cast<uint32_t>(value), 4);
}

void put_bytes(std::string& out, uint32_t field, std::string_view bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out.append(bytes);
}

void put_packed_doubles(std::string& out, uint32_t field, const std::vector<double>& values) {
  if (values.empty()) return;
  std::string packed;
  packed.reserve(values.size() * 8);
  for (double v : values)
    put_le(packed, std::bit_cast<uint64_t>(v), 8);
  put_bytes(out, field, packed);
}

void put_packed_ints(std::string& out, uint32_t field, const std::vector<int64_t>& values) {
  if (values.empty()) return;
  std::string packed;
  for (int64_t v : values)
    put_varint(packed, static_cast<uint64_t>(v));
  put_bytes(out, field, packed);
}

Status ProtoReader::read_key(uint32_t* field, uint32_t* type) {
  uint64_t key;
  TROUPE_RETURN_IF_ERROR(read_varint(&key));
  *field = static_cast<uint32_t>(key >> 3);
  *type = static_cast<uint32_t>(key & 7);
  if (*field == 0) return corrupt("field number 0");
  return Status::OK();
}

Status ProtoReader::read_long_varint(uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (done()) return corrupt("truncated varint");
    uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    *value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return Status::OK();
  }
  return corrupt("varint longer than 10 bytes");
}

Status ProtoReader::read_fixed(int bytes, uint64_t* value) {
  if (data_.size() - pos_ < static_cast<size_t>(bytes)) return corrupt("truncated fixed field");
  *value = get_le(data_.data() + pos_, bytes);
  pos_ += bytes;
  return Status::OK();
}

Status ProtoReader::read_bytes(std::string_view* out) {
  uint64_t n;
  TROUPE_RETURN_IF_ERROR(read_varint(&n));
  if (n > data_.size() - pos_) return corrupt("length-delimited field runs past the message");
  *out = data_.substr(pos_, n);
  pos_ += n;
  return Status::OK();
}

Status ProtoReader::skip(uint32_t type) {
  uint64_t ignored;
  std::string_view ignored_bytes;
  switch (type) {
    case kVarint:
      return read_varint(&ignored);
    case kFixed64:
      return read_fixed(8, &ignored);
    case kFixed32:
      return read_fixed(4, &ignored);
    case kLengthDelimited:
      return read_bytes(&ignored_bytes);
    default:
      return corrupt(fmt::format("unsupported wire type {}", type));
  }
}

Status ProtoReader::expect(uint32_t field, uint32_t type, uint32_t expected) const {
  if (type == expected) return Status::OK();
  return corrupt(fmt::format("field {} has wire type {}, expected {}", field, type, expected));
}

Status ProtoReader::corrupt(const std::string& why) const {
  return errors::DataLoss("{}: malformed protobuf at byte {}: {}", what_, pos_, why);
}

}  // namespace troupe::proto
