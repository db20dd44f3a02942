// .npy: a tensor's header and bytes, and back.
#include "troupe/graph/formats/npy.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "troupe/graph/formats/little_endian.hpp"
#include "troupe/graph/formats/npy_header.hpp"

namespace troupe {
namespace {

static_assert(std::endian::native == std::endian::little,
              "npy.cpp writes tensor buffers as little-endian bytes");

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicSize = 6;
constexpr size_t kNpyAlign = 64;

StatusOr<std::string> npy_descr(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
      return std::string("<f4");
    case DataType::kDouble:
      return std::string("<f8");
    case DataType::kInt32:
      return std::string("<i4");
    case DataType::kInt64:
      return std::string("<i8");
    case DataType::kBool:
      return std::string("|b1");
    case DataType::kUint8:
      return std::string("|u1");
    default:
      return errors::InvalidArgument(
          "dtype {} cannot be stored in .npy; expected float32, float64, int32, int64, bool or "
          "uint8",
          dtype_name(dtype));
  }
}

// Maps a numpy descr ('<f4', '>i8', '|b1', ...) to a dtype; sets *swap for big-endian data.
StatusOr<DataType> dtype_from_descr(const std::string& descr, const std::string& what, bool* swap) {
  auto unsupported = [&] {
    return errors::InvalidArgument(
        "{}: dtype '{}' is not supported; expected one of <f4 <f8 <i4 <i8 |b1 |u1", what, descr);
  };
  if (descr.size() != 3) return unsupported();
  char order = descr[0];
  std::string_view kind = std::string_view(descr).substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=') return unsupported();
  DataType dtype;
  if (kind == "f4") {
    dtype = DataType::kFloat;
  } else if (kind == "f8") {
    dtype = DataType::kDouble;
  } else if (kind == "i4") {
    dtype = DataType::kInt32;
  } else if (kind == "i8") {
    dtype = DataType::kInt64;
  } else if (kind == "b1") {
    dtype = DataType::kBool;
  } else if (kind == "u1") {
    dtype = DataType::kUint8;
  } else {
    return unsupported();
  }
  const bool one_byte = dtype == DataType::kBool || dtype == DataType::kUint8;
  if (order == '|' && !one_byte) return unsupported();
  *swap = order == '>' && !one_byte;
  return dtype;
}

}  // namespace

StatusOr<std::string> encode_npy_header(const Tensor& tensor) {
  if (!tensor.is_initialized()) {
    return errors::InvalidArgument("an uninitialised tensor cannot be stored in .npy");
  }
  TROUPE_ASSIGN_OR_RETURN(std::string descr, npy_descr(tensor.dtype()));
  // The shape as Python's repr of a tuple: "()", "(3,)", "(2, 3)".
  std::string shape = "(";
  for (int i = 0; i < tensor.rank(); ++i) {
    if (i > 0) shape += ", ";
    shape += std::to_string(tensor.dim(i));
  }
  if (tensor.rank() == 1) shape += ",";
  shape += ")";
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  size_t unpadded = kNpyMagicSize + 2 + 2 + dict.size() + 1;
  size_t padding = (kNpyAlign - unpadded % kNpyAlign) % kNpyAlign;
  size_t header_len = dict.size() + padding + 1;
  if (header_len > 0xffff) {
    return errors::InvalidArgument("a tensor of rank {} has a .npy header over 64 KiB",
                                   tensor.rank());
  }
  std::string out(kNpyMagic, kNpyMagicSize);
  out.push_back('\x01');  // major version
  out.push_back('\x00');  // minor version
  little_endian::put16(out, static_cast<uint16_t>(header_len));
  out += dict;
  out.append(padding, ' ');
  out.push_back('\n');
  return out;
}

StatusOr<std::string> encode_npy(const Tensor& tensor) {
  TROUPE_ASSIGN_OR_RETURN(std::string out, encode_npy_header(tensor));
  if (tensor.total_bytes() > 0) {
    out.append(static_cast<const char*>(tensor.raw_data()), tensor.total_bytes());
  }
  return out;
}

StatusOr<Tensor> decode_npy(std::string_view bytes, const std::string& what) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < kNpyMagicSize + 2 ||
      bytes.substr(0, kNpyMagicSize) != std::string_view(kNpyMagic, kNpyMagicSize)) {
    return errors::DataLoss("{}: not a .npy array (no \\x93NUMPY magic)", what);
  }
  uint8_t major = p[6];
  size_t header_len, header_start;
  if (major == 1) {
    if (bytes.size() < 10) return errors::DataLoss("{}: truncated .npy header", what);
    header_len = little_endian::get16(p + 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return errors::DataLoss("{}: truncated .npy header", what);
    header_len = little_endian::get32(p + 8);
    header_start = 12;
  } else {
    return errors::InvalidArgument("{}: .npy format version {}.{} is not supported", what, major,
                                   p[7]);
  }
  if (header_start + header_len > bytes.size()) {
    return errors::DataLoss("{}: .npy header of {} bytes runs past the {} bytes of the array", what,
                            header_len, bytes.size());
  }
  TROUPE_ASSIGN_OR_RETURN(NpyHeader header,
                          parse_npy_header(bytes.substr(header_start, header_len), what));
  const std::string& descr = header.descr;
  bool swap = false;
  TROUPE_ASSIGN_OR_RETURN(DataType dtype, dtype_from_descr(descr, what, &swap));
  auto shape = TensorShape::from_dims(header.shape);
  if (!shape.ok()) {
    return errors::DataLoss("{}: bad shape in the .npy header: {}", what, shape.status().message());
  }
  // Fortran order is harmless for at most one dimension larger than 1, but numpy only writes
  // it for such arrays when asked to; reject it outright rather than guess.
  if (header.fortran_order) {
    return errors::InvalidArgument(
        "{}: fortran_order True is not supported; save a C-contiguous array "
        "(numpy.ascontiguousarray)",
        what);
  }
  std::string_view data = bytes.substr(header_start + header_len);
  size_t item = dtype_size(dtype);
  int64_t n = shape->num_elements();
  if (static_cast<uint64_t>(n) > data.size() / item || n * item != data.size()) {
    return errors::DataLoss(
        "{}: shape {} of '{}' needs {} elements of {} bytes, the array has {} bytes of data", what,
        shape->to_string(), descr, n, item, data.size());
  }
  Tensor tensor(dtype, *std::move(shape));
  if (data.empty()) return tensor;
  auto* out = static_cast<uint8_t*>(tensor.raw_data());
  std::memcpy(out, data.data(), data.size());
  if (swap) {
    for (size_t i = 0; i < data.size(); i += item)
      std::reverse(out + i, out + i + item);
  }
  if (dtype == DataType::kBool) {
    for (size_t i = 0; i < data.size(); ++i) {
      if (out[i] > 1) {
        return errors::DataLoss("{}: bool element {} holds byte 0x{:02x}, expected 0 or 1", what, i,
                                out[i]);
      }
    }
  }
  return tensor;
}

}  // namespace troupe
