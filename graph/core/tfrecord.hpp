// TFRecord files, as TensorFlow writes and reads them (event files, tf.data's TFRecordDataset,
// tf.python_io): a sequence of records, each framed as
//   uint64 length (little-endian), uint32 masked CRC32C of those 8 bytes,
//   the data, uint32 masked CRC32C of the data.
// CRC32C is Castagnoli's (reflected polynomial 0x82F63B78); a stored CRC is masked as
// ((crc >> 15) | (crc << 17)) + 0xa282ead8. A file may be compressed whole as TensorFlow's
// TFRecordOptions compress it: a zlib stream (ZLIB) or gzip members (GZIP); the records'
// offsets are then those of the uncompressed stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "troupe/graph/core/status.hpp"

namespace troupe {

// `crc` continues a previous result: crc32c(b, crc32c(a)) == crc32c(a + b).
// With SSE 4.2's CRC32 instruction where the CPU has it, else by table.
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);
// By table always: what crc32c must agree with (for tests).
uint32_t crc32c_portable(const void* data, size_t size, uint32_t crc = 0);
uint32_t mask_crc32c(uint32_t crc);
uint32_t unmask_crc32c(uint32_t masked);

// One framed record holding `data`.
std::string tfrecord_frame(std::string_view data);

enum class TFRecordCompression { kNone, kZlib, kGzip };
// TensorFlow's compression_type names: "" or "NONE", "ZLIB", "GZIP"; InvalidArgument naming
// the value otherwise.
StatusOr<TFRecordCompression> parse_tfrecord_compression(std::string_view name);
// `data` compressed whole as a file of that compression holds it (for writers and tests).
StatusOr<std::string> tfrecord_compress(std::string_view data, TFRecordCompression compression);

// The uncompressed bytes of a ZLIB or GZIP file (gzip members one after the other, as gzip
// concatenates them), read through `file` in 64 KiB pieces: for TFRecord files and for text
// files TensorFlow reads compressed.
class Inflater {
 public:
  explicit Inflater(TFRecordCompression compression);
  ~Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Up to `want` bytes into `to`; *got < want only at the end of the file. An error is the
  // message of a DataLoss ("the GZIP stream is cut short"); the caller names the file.
  Status read(std::FILE* file, char* to, size_t want, size_t* got);

 private:
  class Stream;
  std::unique_ptr<Stream> stream_;
};

// Reads the records of one file in order, verifying both CRCs of each. Errors name the file
// (as "<noun> '<path>'"), the record's index and its byte offset: NotFound for a missing
// file, DataLoss for a truncated record or a CRC mismatch. Not thread-safe.
class TFRecordReader {
 public:
  // `noun` says what the file is in errors ("TFRecord file", "event file").
  // A compressed file that is not what `compression` says, or is cut, is DataLoss.
  static StatusOr<TFRecordReader> open(
      const std::string& path, std::string_view noun = "TFRecord file",
      TFRecordCompression compression = TFRecordCompression::kNone);
  TFRecordReader(TFRecordReader&& other) noexcept;
  TFRecordReader& operator=(TFRecordReader&& other) noexcept;
  ~TFRecordReader();

  // The next record into *record; *end = true (and *record untouched) after the last one.
  Status read(std::string* record, bool* end);

  const std::string& path() const { return path_; }
  // Records read so far.
  int64_t records_read() const { return index_; }
  // The byte offset of the next record (TensorFlow's TFRecordReader keys records by it).
  uint64_t offset() const { return offset_; }

 private:
  TFRecordReader(std::FILE* file, std::string path, std::string noun,
                 std::unique_ptr<Inflater> inflater);
  Status data_loss(std::string_view what) const;
  // Up to `want` bytes of the (uncompressed) stream into `to`; *got < want only at its end.
  Status read_bytes(char* to, size_t want, size_t* got);

  std::FILE* file_ = nullptr;
  std::unique_ptr<Inflater> inflater_;  // null for an uncompressed file
  std::string path_;
  std::string noun_;
  int64_t index_ = 0;    // of the next record
  uint64_t offset_ = 0;  // of the next record
};

}  // namespace troupe
