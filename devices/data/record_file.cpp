// RecordFile: opening a file in its format, and reading its records with their keys.
#include "troupe/devices/data/record_file.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace troupe::data {

StatusOr<std::unique_ptr<RecordFile>> RecordFile::open(RecordFormat format, const std::string& path,
                                                       const RecordLayout& layout,
                                                       std::string who) {
  std::unique_ptr<RecordFile> file(new RecordFile(format, path, layout, std::move(who)));
  if (format == RecordFormat::kTFRecord) {
    TROUPE_ASSIGN_OR_RETURN(TFRecordReader reader,
                            TFRecordReader::open(path, "TFRecord file", layout.compression));
    file->records_.emplace(std::move(reader));
    return file;
  }
  file->file_ = std::fopen(path.c_str(), "rb");
  if (file->file_ == nullptr) {
    int err = errno;
    if (err == ENOENT) {
      return errors::NotFound("{}: file '{}' does not exist", file->who_, path);
    }
    return errors::PermissionDenied("{}: cannot open '{}': {}", file->who_, path,
                                    std::strerror(err));
  }
  if (format == RecordFormat::kFixedLength) {
    std::error_code error;
    auto size = static_cast<int64_t>(std::filesystem::file_size(path, error));
    if (error) {
      return errors::DataLoss("{}: cannot size '{}': {}", file->who_, path, error.message());
    }
    file->end_offset_ = size - layout.footer;
    file->offset_ = layout.header;
    if (std::fseek(file->file_, layout.header, SEEK_SET) != 0) {
      return errors::DataLoss("{}: cannot seek in '{}': {}", file->who_, path,
                              std::strerror(errno));
    }
  }
  if (format == RecordFormat::kTextLine) {
    if (layout.compression != TFRecordCompression::kNone) {
      file->inflater_ = std::make_unique<Inflater>(layout.compression);
    }
    std::string skipped;
    bool end = false;
    for (int64_t i = 0; i < layout.skip_header_lines && !end; ++i) {
      TROUPE_RETURN_IF_ERROR(file->read_line(&skipped, &end));
    }
  }
  return file;
}

RecordFile::~RecordFile() {
  if (file_ != nullptr) std::fclose(file_);
}

Status RecordFile::read(std::string* record, std::string* key, bool* end) {
  *end = false;
  switch (format_) {
    case RecordFormat::kTFRecord: {
      const uint64_t offset = records_->offset();
      TROUPE_RETURN_IF_ERROR(records_->read(record, end));
      if (!*end) *key = fmt::format("{}:{}", path_, offset);
      return Status::OK();
    }
    case RecordFormat::kTextLine:
      TROUPE_RETURN_IF_ERROR(read_line(record, end));
      if (!*end) *key = fmt::format("{}:{}", path_, count_);
      return Status::OK();
    case RecordFormat::kFixedLength: {
      const int64_t size = layout_.record;
      *end = offset_ + size > end_offset_;
      if (*end) return Status::OK();
      record->resize(static_cast<size_t>(size));
      if (std::fread(record->data(), 1, record->size(), file_) != record->size()) {
        return errors::DataLoss("{}: '{}' is shorter than it was: record at offset {} cut", who_,
                                path_, offset_);
      }
      offset_ += size;
      *key = fmt::format("{}:{}", path_, count_++);
      return Status::OK();
    }
    case RecordFormat::kWholeFile: {
      *end = whole_file_read_;
      if (*end) return Status::OK();
      record->clear();
      char buffer[1 << 16];
      for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file_)) > 0;)
        record->append(buffer, n);
      if (std::ferror(file_)) {
        return errors::DataLoss("{}: cannot read '{}': {}", who_, path_, std::strerror(errno));
      }
      whole_file_read_ = true;
      *key = path_;
      return Status::OK();
    }
  }
  return Status::OK();
}

Status RecordFile::fill() {
  constexpr size_t kPiece = size_t{1} << 16;
  buffer_.resize(kPiece);
  taken_ = 0;
  size_t got = 0;
  if (inflater_ != nullptr) {
    Status read = inflater_->read(file_, buffer_.data(), kPiece, &got);
    if (!read.ok()) {
      buffer_.clear();
      return errors::DataLoss("{}: text file '{}' after line {}: {}", who_, path_, count_,
                              read.message());
    }
  } else {
    got = std::fread(buffer_.data(), 1, kPiece, file_);
    if (got < kPiece && std::ferror(file_)) {
      buffer_.clear();
      return errors::DataLoss("{}: cannot read '{}': {}", who_, path_, std::strerror(errno));
    }
  }
  buffer_.resize(got);
  return Status::OK();
}

Status RecordFile::read_line(std::string* line, bool* end) {
  line->clear();
  bool any = false;
  for (;;) {
    if (taken_ == buffer_.size()) {
      TROUPE_RETURN_IF_ERROR(fill());
      if (buffer_.empty()) break;
    }
    any = true;
    const size_t newline = buffer_.find('\n', taken_);
    const size_t stop = newline == std::string::npos ? buffer_.size() : newline;
    line->append(buffer_, taken_, stop - taken_);
    taken_ = newline == std::string::npos ? stop : stop + 1;
    if (newline != std::string::npos) break;
  }
  if (!line->empty() && line->back() == '\r') line->pop_back();
  *end = !any;
  if (any) ++count_;
  return Status::OK();
}

}  // namespace troupe::data
