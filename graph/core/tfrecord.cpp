// TFRecord framing: CRC32C by table, and a buffered reader over stdio, through zlib's inflate
// for compressed files.
#include "troupe/graph/core/tfrecord.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <zlib.h>

#include "troupe/graph/core/protobuf_wire.hpp"

namespace troupe {
namespace {

constexpr std::array<uint32_t, 256> make_crc32c_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrc32cTable = make_crc32c_table();

constexpr uint32_t kMaskDelta = 0xa282ead8u;
constexpr size_t kHeaderSize = 12;  // length + its CRC

using proto::get_le;
using proto::put_le;

uint32_t crc32c_by_table(const uint8_t* p, size_t size, uint32_t crc) {
  for (size_t i = 0; i < size; ++i)
    crc = kCrc32cTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
// SSE 4.2's CRC32 instruction computes CRC32C: eight bytes a cycle or so, some ten times the
// table's speed (every TFRecord byte is checked with it).
__attribute__((target("sse4.2"))) uint32_t crc32c_by_instruction(const uint8_t* p, size_t size,
                                                                 uint32_t crc) {
  uint64_t c = crc;
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
  }
  auto c32 = static_cast<uint32_t>(c);
  for (; size > 0; --size, ++p)
    c32 = __builtin_ia32_crc32qi(c32, *p);
  return c32;
}

const bool kHaveCrc32Instruction = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

uint32_t crc32c(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  if (kHaveCrc32Instruction) return ~crc32c_by_instruction(p, size, ~crc);
#endif
  return ~crc32c_by_table(p, size, ~crc);
}

// Both ways agree (checked by the tests on any x86 host with the instruction).
uint32_t crc32c_portable(const void* data, size_t size, uint32_t crc) {
  return ~crc32c_by_table(static_cast<const uint8_t*>(data), size, ~crc);
}

uint32_t mask_crc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}

uint32_t unmask_crc32c(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

std::string tfrecord_frame(std::string_view data) {
  std::string out;
  out.reserve(kHeaderSize + data.size() + 4);
  put_le(out, data.size(), 8);
  put_le(out, mask_crc32c(crc32c(out.data(), 8)), 4);
  out.append(data);
  put_le(out, mask_crc32c(crc32c(data.data(), data.size())), 4);
  return out;
}

StatusOr<TFRecordCompression> parse_tfrecord_compression(std::string_view name) {
  if (name.empty() || name == "NONE") return TFRecordCompression::kNone;
  if (name == "ZLIB") return TFRecordCompression::kZlib;
  if (name == "GZIP") return TFRecordCompression::kGzip;
  return errors::InvalidArgument(
      "compression_type '{}': expected \"\", \"NONE\", \"ZLIB\" or \"GZIP\"", name);
}

namespace {

// zlib's window bits: 15, plus 16 for a gzip wrapper (TensorFlow's ZlibCompressionOptions).
int window_bits(TFRecordCompression compression) {
  return compression == TFRecordCompression::kGzip ? MAX_WBITS + 16 : MAX_WBITS;
}

}  // namespace

StatusOr<std::string> tfrecord_compress(std::string_view data, TFRecordCompression compression) {
  if (compression == TFRecordCompression::kNone) return std::string(data);
  z_stream stream{};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits(compression), 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return errors::Internal("zlib: deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, data.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) return errors::Internal("zlib: deflate failed ({})", result);
  return out;
}

// The uncompressed stream of a ZLIB or GZIP file, read in 64 KiB pieces (gzip members one after
// the other, as gzip concatenates them).
class Inflater::Stream {
 public:
  explicit Stream(TFRecordCompression compression) : compression_(compression) {}
  ~Stream() {
    if (started_) inflateEnd(&stream_);
  }

  // Up to `want` uncompressed bytes; *got < want only at the end of the file. An error is the
  // message of a DataLoss.
  Status read(std::FILE* file, char* to, size_t want, size_t* got) {
    if (!started_) {
      if (inflateInit2(&stream_, window_bits(compression_)) != Z_OK) {
        return errors::Internal("zlib: inflateInit2 failed");
      }
      started_ = true;
    }
    *got = 0;
    stream_.next_out = reinterpret_cast<Bytef*>(to);
    stream_.avail_out = static_cast<uInt>(want);
    while (stream_.avail_out > 0 && !finished_) {
      if (stream_.avail_in == 0) {
        size_t n = std::fread(input_.data(), 1, input_.size(), file);
        if (n == 0) {
          if (std::ferror(file)) return errors::DataLoss("cannot read: {}", std::strerror(errno));
          // The file ends: complete only after a whole stream (or between gzip members), or
          // empty (no records).
          if (!at_stream_end_ && read_any_) {
            return errors::DataLoss("the {} stream is cut short",
                                    compression_ == TFRecordCompression::kGzip ? "GZIP" : "ZLIB");
          }
          finished_ = true;
          break;
        }
        stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
        stream_.avail_in = static_cast<uInt>(n);
        read_any_ = true;
      }
      if (at_stream_end_) {  // more input after a gzip member: the next member
        inflateReset(&stream_);
        at_stream_end_ = false;
      }
      const int result = inflate(&stream_, Z_NO_FLUSH);
      if (result == Z_STREAM_END) {
        at_stream_end_ = true;
      } else if (result != Z_OK && result != Z_BUF_ERROR) {
        return errors::DataLoss("is not a valid {} stream ({})",
                                compression_ == TFRecordCompression::kGzip ? "GZIP" : "ZLIB",
                                stream_.msg != nullptr ? stream_.msg : "zlib error");
      }
    }
    *got = want - stream_.avail_out;
    return Status::OK();
  }

 private:
  TFRecordCompression compression_;
  z_stream stream_{};
  bool started_ = false;
  bool at_stream_end_ = false;  // the last inflate ended a stream (a gzip member)
  bool finished_ = false;
  bool read_any_ = false;
  std::array<char, 1 << 16> input_{};
};

Inflater::Inflater(TFRecordCompression compression)
    : stream_(std::make_unique<Stream>(compression)) {}
Inflater::~Inflater() = default;
Status Inflater::read(std::FILE* file, char* to, size_t want, size_t* got) {
  return stream_->read(file, to, want, got);
}

StatusOr<TFRecordReader> TFRecordReader::open(const std::string& path, std::string_view noun,
                                              TFRecordCompression compression) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    int err = errno;
    if (err == ENOENT) return errors::NotFound("{} '{}' does not exist", noun, path);
    return errors::PermissionDenied("cannot open {} '{}': {}", noun, path, std::strerror(err));
  }
  std::unique_ptr<Inflater> inflater;
  if (compression != TFRecordCompression::kNone) {
    inflater = std::make_unique<Inflater>(compression);
  }
  return TFRecordReader(file, path, std::string(noun), std::move(inflater));
}

TFRecordReader::TFRecordReader(std::FILE* file, std::string path, std::string noun,
                               std::unique_ptr<Inflater> inflater)
    : file_(file), inflater_(std::move(inflater)), path_(std::move(path)), noun_(std::move(noun)) {}

TFRecordReader::TFRecordReader(TFRecordReader&& other) noexcept
    : file_(std::exchange(other.file_, nullptr)),
      inflater_(std::move(other.inflater_)),
      path_(std::move(other.path_)),
      noun_(std::move(other.noun_)),
      index_(other.index_),
      offset_(other.offset_) {}

TFRecordReader& TFRecordReader::operator=(TFRecordReader&& other) noexcept {
  if (this != &other) {
    if (file_ != nullptr) std::fclose(file_);
    file_ = std::exchange(other.file_, nullptr);
    inflater_ = std::move(other.inflater_);
    path_ = std::move(other.path_);
    noun_ = std::move(other.noun_);
    index_ = other.index_;
    offset_ = other.offset_;
  }
  return *this;
}

TFRecordReader::~TFRecordReader() {
  if (file_ != nullptr) std::fclose(file_);
}

Status TFRecordReader::data_loss(std::string_view what) const {
  return errors::DataLoss("{} '{}': record {} at offset {} {}", noun_, path_, index_, offset_,
                          what);
}

Status TFRecordReader::read_bytes(char* to, size_t want, size_t* got) {
  if (inflater_ != nullptr) {
    Status read = inflater_->read(file_, to, want, got);
    if (!read.ok()) return data_loss(read.message());
    return Status::OK();
  }
  *got = std::fread(to, 1, want, file_);
  if (*got < want && std::ferror(file_)) {
    return errors::DataLoss("{} '{}': cannot read record {} at offset {}: {}", noun_, path_, index_,
                            offset_, std::strerror(errno));
  }
  return Status::OK();
}

Status TFRecordReader::read(std::string* record, bool* end) {
  *end = false;
  char header[kHeaderSize];
  size_t got = 0;
  TROUPE_RETURN_IF_ERROR(read_bytes(header, kHeaderSize, &got));
  if (got == 0) {
    *end = true;
    return Status::OK();
  }
  if (got < kHeaderSize) return data_loss("is truncated (header)");
  uint64_t length = get_le(header, 8);
  if (unmask_crc32c(static_cast<uint32_t>(get_le(header + 8, 4))) != crc32c(header, 8)) {
    return data_loss("has a corrupt length (CRC32C mismatch)");
  }
  std::string data;
  // Read in bounded pieces: a corrupt length that passed its CRC cannot reserve the memory.
  constexpr uint64_t kPiece = uint64_t{1} << 24;
  for (uint64_t left = length; left > 0;) {
    size_t want = static_cast<size_t>(std::min(left, kPiece));
    size_t before = data.size();
    data.resize(before + want);
    size_t n = 0;
    TROUPE_RETURN_IF_ERROR(read_bytes(data.data() + before, want, &n));
    if (n < want) {
      return data_loss(
          fmt::format("is truncated ({} bytes of data declared, {} present)", length, before + n));
    }
    left -= want;
  }
  char footer[4];
  size_t footer_got = 0;
  TROUPE_RETURN_IF_ERROR(read_bytes(footer, 4, &footer_got));
  if (footer_got < 4) return data_loss("is truncated (data CRC)");
  if (unmask_crc32c(static_cast<uint32_t>(get_le(footer, 4))) != crc32c(data.data(), data.size())) {
    return data_loss("has corrupt data (CRC32C mismatch)");
  }
  *record = std::move(data);
  ++index_;
  offset_ += kHeaderSize + length + 4;
  return Status::OK();
}

}  // namespace troupe
