// RecordFile: the records of one file, in order, in one of the formats TensorFlow reads files
// in, each with the key TensorFlow's reader of that format gives it: TFRecords ("path:offset",
// the record's byte offset in the uncompressed stream; CRCs checked; graph/core/tfrecord.hpp),
// text lines ("path:line", counting from 1, skipped header lines included; without "\n" or
// "\r\n"), both also ZLIB or GZIP compressed as TensorFlow writes them, fixed-length records
// after header_bytes, up to footer_bytes before the end ("path:n", from 0; a partial record at
// the end is not read), and whole files ("path"). The tf.data file datasets and the queue
// readers (TFRecordReader, ...) both read through it. Errors name `who` (the node) and the
// file: NotFound for a missing one, DataLoss for a cut or corrupt record. Not thread-safe.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tfrecord.hpp"

namespace troupe::data {

enum class RecordFormat { kTFRecord, kTextLine, kFixedLength, kWholeFile };

struct RecordLayout {
  int64_t header = 0, record = 0, footer = 0;                    // fixed-length records
  int64_t skip_header_lines = 0;                                 // text lines
  TFRecordCompression compression = TFRecordCompression::kNone;  // TFRecords, text lines
};

class RecordFile {
 public:
  static StatusOr<std::unique_ptr<RecordFile>> open(RecordFormat format, const std::string& path,
                                                    const RecordLayout& layout, std::string who);
  ~RecordFile();
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  // The next record and its key; *end = true after the last one.
  Status read(std::string* record, std::string* key, bool* end);

 private:
  RecordFile(RecordFormat format, std::string path, RecordLayout layout, std::string who)
      : format_(format), path_(std::move(path)), layout_(layout), who_(std::move(who)) {}
  Status read_line(std::string* line, bool* end);
  // Refills buffer_ from the file (through inflater_ when compressed); empty at its end.
  Status fill();

  RecordFormat format_;
  std::string path_;
  RecordLayout layout_;
  std::string who_;
  std::optional<TFRecordReader> records_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<Inflater> inflater_;   // compressed text lines
  std::string buffer_;                   // text lines: read, not yet taken
  size_t taken_ = 0;                     // of buffer_
  int64_t offset_ = 0, end_offset_ = 0;  // fixed-length records
  int64_t count_ = 0;                    // records (lines) read so far
  bool whole_file_read_ = false;
};

}  // namespace troupe::data
