// Datasets read from files, one file after another, each element a string scalar:
// TFRecordDataset (records, CRCs checked: graph/core/tfrecord.hpp), TextLineDataset (lines,
// without "\n" or "\r\n"), FixedLengthRecordDataset (records of record_bytes after
// header_bytes, up to footer_bytes before the end; a partial record at the end is not read, as
// TensorFlow's). Files open when the iterator reaches them: a missing file is NotFound naming
// it. Compression is Unimplemented. And MatchingFiles, the files a glob pattern names.
#include <glob.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "troupe/devices/data/dataset_kernel.hpp"
#include "troupe/graph/core/tfrecord.hpp"

namespace troupe::data {
namespace {

enum class Format { kTFRecord, kTextLine, kFixedLength };

struct FixedLayout {
  int64_t header = 0, record = 0, footer = 0;
};

class FileDataset : public DatasetBase {
 public:
  FileDataset(std::string node, Format format, std::vector<std::string> files, FixedLayout fixed)
      : DatasetBase(std::move(node), {DataType::kString}),
        format_(format),
        files_(std::move(files)),
        fixed_(fixed) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<FileDataset>());
  }

 private:
  // Reads the files in order; one file is open at a time.
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const FileDataset> dataset) : dataset_(std::move(dataset)) {}
    ~Iterator() override { close(); }

    Status get_next(Element* out, bool* end) override {
      std::string record;
      for (;;) {
        if (!is_open()) {
          if (next_file_ >= dataset_->files_.size()) {
            *end = true;
            return Status::OK();
          }
          TROUPE_RETURN_IF_ERROR(open(dataset_->files_[next_file_++]));
        }
        bool file_end = false;
        TROUPE_RETURN_IF_ERROR(read(&record, &file_end));
        if (!file_end) break;
        close();
      }
      *end = false;
      *out = {Tensor(record)};
      return Status::OK();
    }

   private:
    bool is_open() const { return records_.has_value() || file_ != nullptr; }

    Status open(const std::string& path) {
      if (dataset_->format_ == Format::kTFRecord) {
        TROUPE_ASSIGN_OR_RETURN(TFRecordReader reader, TFRecordReader::open(path));
        records_.emplace(std::move(reader));
        return Status::OK();
      }
      file_ = std::fopen(path.c_str(), "rb");
      if (file_ == nullptr) {
        int err = errno;
        if (err == ENOENT) return errors::NotFound("{}: file '{}' does not exist", name(), path);
        return errors::PermissionDenied("{}: cannot open '{}': {}", name(), path,
                                        std::strerror(err));
      }
      path_ = path;
      if (dataset_->format_ == Format::kFixedLength) {
        std::error_code error;
        auto size = static_cast<int64_t>(std::filesystem::file_size(path, error));
        if (error)
          return errors::DataLoss("{}: cannot size '{}': {}", name(), path, error.message());
        const FixedLayout& f = dataset_->fixed_;
        end_offset_ = size - f.footer;
        offset_ = f.header;
        if (std::fseek(file_, f.header, SEEK_SET) != 0) {
          return errors::DataLoss("{}: cannot seek in '{}': {}", name(), path,
                                  std::strerror(errno));
        }
      }
      return Status::OK();
    }

    void close() {
      records_.reset();
      if (file_ != nullptr) std::fclose(file_);
      file_ = nullptr;
    }

    Status read(std::string* record, bool* end) {
      switch (dataset_->format_) {
        case Format::kTFRecord:
          return records_->read(record, end);
        case Format::kTextLine:
          return read_line(record, end);
        case Format::kFixedLength:
          return read_fixed(record, end);
      }
      return Status::OK();
    }

    Status read_line(std::string* line, bool* end) {
      line->clear();
      int c;
      bool any = false;
      while ((c = std::getc(file_)) != EOF) {
        any = true;
        if (c == '\n') break;
        line->push_back(static_cast<char>(c));
      }
      if (std::ferror(file_)) {
        return errors::DataLoss("{}: cannot read '{}': {}", name(), path_, std::strerror(errno));
      }
      if (!line->empty() && line->back() == '\r') line->pop_back();
      *end = !any;
      return Status::OK();
    }

    Status read_fixed(std::string* record, bool* end) {
      int64_t size = dataset_->fixed_.record;
      *end = offset_ + size > end_offset_;
      if (*end) return Status::OK();
      record->resize(static_cast<size_t>(size));
      if (std::fread(record->data(), 1, record->size(), file_) != record->size()) {
        return errors::DataLoss("{}: '{}' is shorter than it was: record at offset {} cut", name(),
                                path_, offset_);
      }
      offset_ += size;
      return Status::OK();
    }

    const std::string& name() const { return dataset_->node(); }

    std::shared_ptr<const FileDataset> dataset_;
    size_t next_file_ = 0;
    std::optional<TFRecordReader> records_;
    std::FILE* file_ = nullptr;
    std::string path_;
    int64_t offset_ = 0;
    int64_t end_offset_ = 0;
  };

  Format format_;
  std::vector<std::string> files_;
  FixedLayout fixed_;
};

class FileDatasetKernel : public DatasetOpKernel {
 public:
  FileDatasetKernel(const OpKernelConstruction& c, Format format)
      : DatasetOpKernel(c), format_(format) {}

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    const Tensor& filenames = ctx.input(0);
    if (filenames.dtype() != DataType::kString || filenames.rank() > 1) {
      return invalid(ctx, "filenames must be a string scalar or vector, got {} of shape {}",
                     dtype_name(filenames.dtype()), filenames.shape().to_string());
    }
    std::vector<std::string> files(filenames.flat<std::string>().begin(),
                                   filenames.flat<std::string>().end());
    FixedLayout fixed;
    if (format_ == Format::kFixedLength) {
      TROUPE_ASSIGN_OR_RETURN(fixed.header, scalar_input<int64_t>(ctx, 1, "header_bytes"));
      TROUPE_ASSIGN_OR_RETURN(fixed.record, scalar_input<int64_t>(ctx, 2, "record_bytes"));
      TROUPE_ASSIGN_OR_RETURN(fixed.footer, scalar_input<int64_t>(ctx, 3, "footer_bytes"));
      if (fixed.header < 0 || fixed.footer < 0 || fixed.record <= 0) {
        return invalid(ctx,
                       "record_bytes must be > 0 and header_bytes, footer_bytes >= 0; got {}, "
                       "{}, {}",
                       fixed.record, fixed.header, fixed.footer);
      }
    } else {
      TROUPE_ASSIGN_OR_RETURN(std::string compression,
                              scalar_input<std::string>(ctx, 1, "compression_type"));
      if (!compression.empty() && compression != "NONE") {
        return errors::Unimplemented(
            "node '{}' ({}): compression_type '{}' is not supported by troupe (files are read "
            "uncompressed)",
            node().name(), node().op_name(), compression);
      }
    }
    return new_dataset<FileDataset>(node().name(), format_, std::move(files), fixed);
  }

 private:
  Format format_;
};

template <Format format>
KernelFactory file_kernel() {
  return [](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new FileDatasetKernel(c, format));
  };
}

}  // namespace

// MatchingFiles: every file matching each pattern (glob(3): *, ?, [...]), sorted; none is an
// empty vector, as TensorFlow's.
class MatchingFilesKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& patterns = ctx.input(0);
    if (patterns.rank() > 1) {
      ctx.fail_invalid("pattern must be a scalar or a vector, got shape {}",
                       patterns.shape().to_string());
      return;
    }
    std::vector<std::string> found;
    for (const std::string& pattern : patterns.flat<std::string>()) {
      glob_t matches{};
      const int result = ::glob(pattern.c_str(), 0, nullptr, &matches);
      if (result == 0) {
        found.insert(found.end(), matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
      }
      globfree(&matches);
      if (result == GLOB_NOSPACE) {
        ctx.set_status(errors::ResourceExhausted("node '{}' ({}): out of memory matching '{}'",
                                                 node().name(), node().op_name(), pattern));
        return;
      }
      if (result == GLOB_ABORTED) {
        ctx.set_status(errors::Unknown("node '{}' ({}): a directory of '{}' cannot be read",
                                       node().name(), node().op_name(), pattern));
        return;
      }
    }
    std::sort(found.begin(), found.end());
    Tensor& out = ctx.allocate_output(0, TensorShape{static_cast<int64_t>(found.size())});
    std::copy(found.begin(), found.end(), out.flat<std::string>().begin());
  }
};

void register_file_dataset_kernels(KernelRegistry& r) {
  must_add_kernel(r, "MatchingFiles", kCpu, simple_kernel<MatchingFilesKernel>());
  must_add_kernel(r, "TFRecordDataset", kCpu, file_kernel<Format::kTFRecord>());
  must_add_kernel(r, "TextLineDataset", kCpu, file_kernel<Format::kTextLine>());
  must_add_kernel(r, "FixedLengthRecordDataset", kCpu, file_kernel<Format::kFixedLength>());
}

}  // namespace troupe::data
