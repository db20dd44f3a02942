// .npz checkpoints: the .npy encoding of a tensor and the ZIP container around them.
#include "troupe/apps/training/formats/npz.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "troupe/apps/training/formats/file_io.hpp"

namespace troupe {
namespace {

static_assert(std::endian::native == std::endian::little,
              "npz.cpp writes tensor buffers as little-endian bytes");

// ---- CRC-32 -------------------------------------------------------------------------------

constexpr std::array<uint32_t, 256> make_crc32_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrc32Table = make_crc32_table();

// ---- little-endian fields -----------------------------------------------------------------

void put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>(v >> 8));
}
void put32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint16_t get16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
uint32_t get32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t get64(const uint8_t* p) {
  return static_cast<uint64_t>(get32(p)) | (static_cast<uint64_t>(get32(p + 4)) << 32);
}

// ---- ZIP constants ------------------------------------------------------------------------

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndRecordSignature = 0x06054b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndRecordSize = 22;
constexpr size_t kZip64LocatorSize = 20;
constexpr size_t kMaxCommentSize = 0xffff;
constexpr uint64_t kMax32 = 0xffffffffu;  // also ZIP64's "see the extra field" marker
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
constexpr uint16_t kVersionNeeded = 20;                     // 2.0: plain stored entries
constexpr uint16_t kVersionMadeBy = (3 << 8) | 20;          // Unix, 2.0
constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // 1980-01-01
constexpr uint16_t kDosTimeMidnight = 0;
constexpr uint32_t kExternalAttributes = 0100644u << 16;  // regular file, rw-r--r--

// ---- .npy ---------------------------------------------------------------------------------

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
    default:
      return errors::InvalidArgument(
          "dtype {} cannot be stored in .npy; expected float32, float64, int32, int64 or bool",
          dtype_name(dtype));
  }
}

// The .npy header of `tensor`: magic, version 1.0, length, and the dict padded with spaces to
// a multiple of 64 bytes, ending in '\n'. The data follows it directly.
StatusOr<std::string> npy_header(const Tensor& tensor) {
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
  put16(out, static_cast<uint16_t>(header_len));
  out += dict;
  out.append(padding, ' ');
  out.push_back('\n');
  return out;
}

// A parser for the Python literal dict of a .npy header.
class NpyHeaderParser {
 public:
  NpyHeaderParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  Status parse(std::string* descr, bool* fortran_order, std::vector<int64_t>* shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    skip_ws();
    if (!consume('{')) return corrupt("expected '{'");
    while (true) {
      skip_ws();
      if (consume('}')) break;
      std::string key;
      TROUPE_RETURN_IF_ERROR(parse_string(&key));
      skip_ws();
      if (!consume(':')) return corrupt("expected ':' after '" + key + "'");
      skip_ws();
      if (key == "descr") {
        if (peek() == '[') {
          return errors::InvalidArgument(
              "{}: structured dtypes are not supported; expected one of <f4 <f8 <i4 <i8 |b1",
              what_);
        }
        TROUPE_RETURN_IF_ERROR(parse_string(descr));
        have_descr = true;
      } else if (key == "fortran_order") {
        TROUPE_RETURN_IF_ERROR(parse_bool(fortran_order));
        have_order = true;
      } else if (key == "shape") {
        TROUPE_RETURN_IF_ERROR(parse_tuple(shape));
        have_shape = true;
      } else {
        return corrupt("unexpected key '" + key + "'");
      }
      skip_ws();
      if (consume(',')) continue;
      skip_ws();
      if (consume('}')) break;
      return corrupt("expected ',' or '}'");
    }
    skip_ws();
    if (i_ != s_.size()) return corrupt("text after the closing '}'");
    if (!have_descr) return corrupt("no 'descr'");
    if (!have_order) return corrupt("no 'fortran_order'");
    if (!have_shape) return corrupt("no 'shape'");
    return Status::OK();
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool consume(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t'))
      ++i_;
  }
  Status corrupt(const std::string& why) const {
    return errors::DataLoss("{}: malformed .npy header at byte {} ({}): {}", what_, i_, why,
                            std::string(s_));
  }
  Status parse_string(std::string* out) {
    char quote = peek();
    if (quote != '\'' && quote != '"') return corrupt("expected a quoted string");
    ++i_;
    out->clear();
    while (i_ < s_.size() && s_[i_] != quote) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out->push_back(s_[i_++]);
    }
    if (!consume(quote)) return corrupt("unterminated string");
    return Status::OK();
  }
  Status parse_bool(bool* out) {
    if (s_.substr(i_, 4) == "True") {
      i_ += 4;
      *out = true;
    } else if (s_.substr(i_, 5) == "False") {
      i_ += 5;
      *out = false;
    } else {
      return corrupt("expected True or False");
    }
    return Status::OK();
  }
  Status parse_tuple(std::vector<int64_t>* out) {
    out->clear();
    if (!consume('(')) return corrupt("expected '(' for the shape");
    while (true) {
      skip_ws();
      if (consume(')')) return Status::OK();
      if (peek() < '0' || peek() > '9') return corrupt("expected a dimension");
      int64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (value > (INT64_MAX - 9) / 10) return corrupt("dimension too large");
        value = value * 10 + (s_[i_++] - '0');
      }
      consume('L');  // Python 2 longs
      out->push_back(value);
      skip_ws();
      if (consume(',')) continue;
      skip_ws();
      if (consume(')')) return Status::OK();
      return corrupt("expected ',' or ')' in the shape");
    }
  }

  std::string_view s_;
  const std::string& what_;
  size_t i_ = 0;
};

// Maps a numpy descr ('<f4', '>i8', '|b1', ...) to a dtype; sets *swap for big-endian data.
StatusOr<DataType> dtype_from_descr(const std::string& descr, const std::string& what, bool* swap) {
  auto unsupported = [&] {
    return errors::InvalidArgument(
        "{}: dtype '{}' is not supported; expected one of <f4 <f8 <i4 <i8 |b1", what, descr);
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
  } else {
    return unsupported();
  }
  if (order == '|' && dtype != DataType::kBool) return unsupported();
  *swap = order == '>' && dtype != DataType::kBool;
  return dtype;
}

// ---- files --------------------------------------------------------------------------------

Status write_all(int fd, const void* data, size_t size, const std::string& file) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "cannot write", file);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::OK();
}

// One entry as it will be written.
struct PendingEntry {
  std::string name;  // "<tensor name>.npy"
  std::string header;
  const void* data = nullptr;
  size_t data_size = 0;
  uint32_t crc = 0;
  uint64_t offset = 0;  // of its local header
  uint64_t size() const { return header.size() + data_size; }
};

std::string local_header(const PendingEntry& e) {
  std::string out;
  put32(out, kLocalHeaderSignature);
  put16(out, kVersionNeeded);
  put16(out, 0);  // flags
  put16(out, kMethodStored);
  put16(out, kDosTimeMidnight);
  put16(out, kDosDate1980);
  put32(out, e.crc);
  put32(out, static_cast<uint32_t>(e.size()));  // compressed
  put32(out, static_cast<uint32_t>(e.size()));  // uncompressed
  put16(out, static_cast<uint16_t>(e.name.size()));
  put16(out, 0);  // extra field length
  out += e.name;
  return out;
}

std::string central_header(const PendingEntry& e) {
  std::string out;
  put32(out, kCentralHeaderSignature);
  put16(out, kVersionMadeBy);
  put16(out, kVersionNeeded);
  put16(out, 0);  // flags
  put16(out, kMethodStored);
  put16(out, kDosTimeMidnight);
  put16(out, kDosDate1980);
  put32(out, e.crc);
  put32(out, static_cast<uint32_t>(e.size()));
  put32(out, static_cast<uint32_t>(e.size()));
  put16(out, static_cast<uint16_t>(e.name.size()));
  put16(out, 0);  // extra field length
  put16(out, 0);  // comment length
  put16(out, 0);  // disk number
  put16(out, 0);  // internal attributes
  put32(out, kExternalAttributes);
  put32(out, static_cast<uint32_t>(e.offset));
  out += e.name;
  return out;
}

Status write_file(const std::string& tmp, std::vector<PendingEntry>& entries,
                  const std::string& central, const std::string& end) {
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    int err = errno;
    return errno_status(err, "cannot create", tmp,
                        err == ENOENT ? " (does its directory exist?)" : "");
  }
  Status status;
  for (const PendingEntry& e : entries) {
    std::string head = local_header(e) + e.header;
    status = write_all(fd, head.data(), head.size(), tmp);
    if (status.ok()) status = write_all(fd, e.data, e.data_size, tmp);
    if (!status.ok()) break;
  }
  if (status.ok()) status = write_all(fd, central.data(), central.size(), tmp);
  if (status.ok()) status = write_all(fd, end.data(), end.size(), tmp);
  if (status.ok() && ::fsync(fd) != 0) status = errno_status(errno, "cannot fsync", tmp);
  if (::close(fd) != 0 && status.ok()) status = errno_status(errno, "cannot close", tmp);
  return status;
}

// Values from a ZIP64 extended-information extra field: each present only if the header's
// field is the 0xffffffff marker, in this order.
Status apply_zip64_extra(std::string_view extra, uint64_t* uncompressed, uint64_t* compressed,
                         uint64_t* offset, const std::string& what) {
  size_t i = 0;
  while (i + 4 <= extra.size()) {
    auto p = reinterpret_cast<const uint8_t*>(extra.data()) + i;
    uint16_t id = get16(p), size = get16(p + 2);
    if (i + 4 + size > extra.size()) {
      return errors::DataLoss("{}: extra field 0x{:04x} runs past the header", what, id);
    }
    if (id == kZip64ExtraId) {
      const uint8_t* q = p + 4;
      const uint8_t* q_end = q + size;
      for (uint64_t* field : {uncompressed, compressed, offset}) {
        if (field == nullptr || *field != kMax32) continue;
        if (q + 8 > q_end) return errors::DataLoss("{}: ZIP64 extra field too short", what);
        *field = get64(q);
        q += 8;
      }
    }
    i += 4 + size;
  }
  return Status::OK();
}

// Inflates a raw deflate stream that must expand to exactly `size` bytes.
StatusOr<std::string> inflate_entry(std::string_view in, uint64_t size, const std::string& what) {
  // Deflate expands at most ~1032:1; a larger claim is a corrupt header, not a reason to
  // allocate gigabytes.
  if (size > in.size() * 1040ull + 1024) {
    return errors::DataLoss("{}: claims {} bytes from {} compressed bytes", what, size, in.size());
  }
  std::string out(size, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
    return errors::Internal("{}: inflateInit2 failed", what);
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&zs, Z_FINISH);
  std::string zmsg = zs.msg != nullptr ? zs.msg : "";
  uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc == Z_STREAM_END && produced == size) return out;
  if (rc == Z_DATA_ERROR) {
    return errors::DataLoss("{}: corrupt deflate data ({})", what, zmsg);
  }
  if (rc == Z_STREAM_END) {
    return errors::DataLoss("{}: inflates to {} bytes, header says {}", what, produced, size);
  }
  return errors::DataLoss("{}: deflate data truncated or longer than the {} bytes declared", what,
                          size);
}

}  // namespace

uint32_t crc32(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i)
    crc = kCrc32Table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

StatusOr<std::string> encode_npy(const Tensor& tensor) {
  TROUPE_ASSIGN_OR_RETURN(std::string out, npy_header(tensor));
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
    header_len = get16(p + 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return errors::DataLoss("{}: truncated .npy header", what);
    header_len = get32(p + 8);
    header_start = 12;
  } else {
    return errors::InvalidArgument("{}: .npy format version {}.{} is not supported", what, major,
                                   p[7]);
  }
  if (header_start + header_len > bytes.size()) {
    return errors::DataLoss("{}: .npy header of {} bytes runs past the {} bytes of the array", what,
                            header_len, bytes.size());
  }
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> dims;
  NpyHeaderParser parser(bytes.substr(header_start, header_len), what);
  TROUPE_RETURN_IF_ERROR(parser.parse(&descr, &fortran_order, &dims));
  bool swap = false;
  TROUPE_ASSIGN_OR_RETURN(DataType dtype, dtype_from_descr(descr, what, &swap));
  auto shape = TensorShape::from_dims(dims);
  if (!shape.ok()) {
    return errors::DataLoss("{}: bad shape in the .npy header: {}", what, shape.status().message());
  }
  // Fortran order is harmless for at most one dimension larger than 1, but numpy only writes
  // it for such arrays when asked to; reject it outright rather than guess.
  if (fortran_order) {
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

Status write_npz(const std::string& path, const NamedTensors& tensors) {
  if (tensors.size() >= 0xffff) {
    return errors::InvalidArgument(
        "write_npz '{}': {} tensors; at most 65534 fit without ZIP64, which is not supported", path,
        tensors.size());
  }
  std::vector<PendingEntry> entries;
  entries.reserve(tensors.size());
  std::set<std::string_view> names;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name.empty()) return errors::InvalidArgument("write_npz '{}': empty tensor name", path);
    if (!names.insert(name).second) {
      return errors::InvalidArgument("write_npz '{}': tensor name '{}' appears twice", path, name);
    }
    if (name.size() + 4 > 0xffff) {
      return errors::InvalidArgument("write_npz '{}': tensor name of {} bytes is too long", path,
                                     name.size());
    }
    auto header = npy_header(tensor);
    if (!header.ok()) return header.status().with_context(fmt::format("tensor '{}': ", name));
    PendingEntry e;
    e.name = name + ".npy";
    e.header = *std::move(header);
    e.data = tensor.raw_data();
    e.data_size = tensor.total_bytes();
    e.crc = crc32(e.data, e.data_size, crc32(e.header.data(), e.header.size()));
    e.offset = offset;
    if (e.size() >= kMax32) {
      return errors::InvalidArgument(
          "write_npz '{}': tensor '{}' takes {} bytes; entries over 4 GiB need ZIP64, which is "
          "not supported",
          path, name, e.size());
    }
    offset += kLocalHeaderSize + e.name.size() + e.size();
    entries.push_back(std::move(e));
  }
  std::string central;
  for (const PendingEntry& e : entries)
    central += central_header(e);
  if (offset + central.size() >= kMax32) {
    return errors::InvalidArgument(
        "write_npz '{}': the archive would take {} bytes; over 4 GiB needs ZIP64, which is not "
        "supported",
        path, offset + central.size());
  }
  std::string end;
  put32(end, kEndRecordSignature);
  put16(end, 0);  // this disk
  put16(end, 0);  // disk of the central directory
  put16(end, static_cast<uint16_t>(entries.size()));
  put16(end, static_cast<uint16_t>(entries.size()));
  put32(end, static_cast<uint32_t>(central.size()));
  put32(end, static_cast<uint32_t>(offset));
  put16(end, 0);  // comment length

  const std::string tmp = path + ".tmp";
  Status status = write_file(tmp, entries, central, end);
  if (status.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    status = errno_status(errno, "cannot rename '" + tmp + "' to", path);
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  // Make the rename durable. Best effort: some file systems cannot fsync a directory.
  std::string dir = std::filesystem::path(path).parent_path().string();
  int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);
    ::close(dir_fd);
  }
  return Status::OK();
}

StatusOr<NamedTensors> read_npz(const std::string& path) {
  TROUPE_ASSIGN_OR_RETURN(
      std::string file,
      read_whole_file(path, "",
                      fmt::format("npz file '{}' does not exist (write_npz creates one, e.g. a "
                                  "training run's chief when it saves a checkpoint; check the "
                                  "path)",
                                  path)));
  return decode_npz(file, path);
}

StatusOr<NamedTensors> decode_npz(std::string_view file, const std::string& path) {
  const auto* base = reinterpret_cast<const uint8_t*>(file.data());
  const uint64_t size = file.size();

  // The end of central directory record: the last signature whose comment ends the file.
  uint64_t end_pos = UINT64_MAX;
  if (size >= kEndRecordSize) {
    uint64_t lowest =
        size > kEndRecordSize + kMaxCommentSize ? size - kEndRecordSize - kMaxCommentSize : 0;
    for (uint64_t pos = size - kEndRecordSize + 1; pos-- > lowest;) {
      if (get32(base + pos) == kEndRecordSignature &&
          pos + kEndRecordSize + get16(base + pos + 20) == size) {
        end_pos = pos;
        break;
      }
    }
  }
  if (end_pos == UINT64_MAX) {
    return errors::DataLoss(
        "'{}' is not a ZIP archive or is truncated: no end of central directory record in its "
        "{} bytes",
        path, size);
  }
  const uint8_t* end = base + end_pos;
  uint16_t disk = get16(end + 4), cd_disk = get16(end + 6);
  uint16_t entries_here = get16(end + 8), entries_total = get16(end + 10);
  uint64_t cd_size = get32(end + 12), cd_offset = get32(end + 16);
  bool zip64_marked = entries_total == 0xffff || cd_size == kMax32 || cd_offset == kMax32;
  if (zip64_marked && end_pos >= kZip64LocatorSize &&
      get32(base + end_pos - kZip64LocatorSize) == kZip64LocatorSignature) {
    return errors::InvalidArgument(
        "'{}' is a ZIP64 archive (over 4 GiB or 65535 entries), which is not supported", path);
  }
  if (disk != 0 || cd_disk != 0 || entries_here != entries_total) {
    return errors::InvalidArgument("'{}' is a multi-disk ZIP archive, which is not supported",
                                   path);
  }
  if (cd_offset + cd_size > end_pos) {
    return errors::DataLoss(
        "'{}': central directory (offset {}, {} bytes) runs past its end record at {}", path,
        cd_offset, cd_size, end_pos);
  }

  NamedTensors result;
  std::set<std::string> seen;
  uint64_t pos = cd_offset;
  const uint64_t cd_end = cd_offset + cd_size;
  for (int i = 0; i < entries_total; ++i) {
    if (pos + kCentralHeaderSize > cd_end || get32(base + pos) != kCentralHeaderSignature) {
      return errors::DataLoss("'{}': central directory entry {} at offset {} is corrupt", path, i,
                              pos);
    }
    const uint8_t* h = base + pos;
    uint16_t flags = get16(h + 8), method = get16(h + 10);
    uint32_t crc = get32(h + 16);
    uint64_t compressed = get32(h + 20), uncompressed = get32(h + 24);
    uint16_t name_len = get16(h + 28), extra_len = get16(h + 30), comment_len = get16(h + 32);
    uint64_t local_offset = get32(h + 42);
    if (pos + kCentralHeaderSize + name_len + extra_len + comment_len > cd_end) {
      return errors::DataLoss("'{}': central directory entry {} runs past the directory", path, i);
    }
    std::string name(reinterpret_cast<const char*>(h + kCentralHeaderSize), name_len);
    const std::string what = fmt::format("entry '{}' of '{}'", name, path);
    TROUPE_RETURN_IF_ERROR(apply_zip64_extra(
        std::string_view(reinterpret_cast<const char*>(h + kCentralHeaderSize + name_len),
                         extra_len),
        &uncompressed, &compressed, &local_offset, what));
    pos += kCentralHeaderSize + name_len + extra_len + comment_len;

    if (flags & 0x1)
      return errors::InvalidArgument("{}: encrypted entries are not supported", what);
    if (method != kMethodStored && method != kMethodDeflate) {
      return errors::InvalidArgument(
          "{}: compression method {} is not supported; expected 0 (stored) or 8 (deflate)", what,
          method);
    }
    // The local header: must agree with the central directory on name and method.
    if (local_offset > cd_offset || cd_offset - local_offset < kLocalHeaderSize ||
        get32(base + local_offset) != kLocalHeaderSignature) {
      return errors::DataLoss("{}: no local file header at offset {}", what, local_offset);
    }
    const uint8_t* l = base + local_offset;
    uint16_t local_name_len = get16(l + 26), local_extra_len = get16(l + 28);
    uint64_t data_start = local_offset + kLocalHeaderSize + local_name_len + local_extra_len;
    if (data_start > cd_offset ||
        std::string_view(reinterpret_cast<const char*>(l + kLocalHeaderSize), local_name_len) !=
            name ||
        get16(l + 8) != method) {
      return errors::DataLoss("{}: local file header disagrees with the central directory", what);
    }
    if (compressed > cd_offset - data_start) {
      return errors::DataLoss(
          "{}: {} bytes of data at offset {} run past the entries (file "
          "truncated?)",
          what, compressed, data_start);
    }
    std::string_view stored(file.data() + data_start, compressed);
    std::string inflated;
    std::string_view content = stored;
    if (method == kMethodStored) {
      if (compressed != uncompressed) {
        return errors::DataLoss("{}: stored entry with compressed size {} != size {}", what,
                                compressed, uncompressed);
      }
    } else {
      TROUPE_ASSIGN_OR_RETURN(inflated, inflate_entry(stored, uncompressed, what));
      content = inflated;
    }
    uint32_t actual = crc32(content.data(), content.size());
    if (actual != crc) {
      return errors::DataLoss("{}: CRC-32 mismatch (stored 0x{:08x}, computed 0x{:08x})", what, crc,
                              actual);
    }
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0) {
      return errors::InvalidArgument("{}: not a .npy array (expected names ending in .npy)", what);
    }
    std::string key = name.substr(0, name.size() - 4);
    if (!seen.insert(key).second) return errors::DataLoss("{}: appears twice", what);
    TROUPE_ASSIGN_OR_RETURN(Tensor tensor, decode_npy(content, what));
    result.emplace_back(std::move(key), std::move(tensor));
  }
  if (pos != cd_end) {
    return errors::DataLoss("'{}': central directory holds {} bytes after its {} entries", path,
                            cd_end - pos, entries_total);
  }
  return result;
}

}  // namespace troupe
