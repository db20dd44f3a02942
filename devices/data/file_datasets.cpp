// Datasets read from files, one file after another, each element a string scalar:
// TFRecordDataset, TextLineDataset, FixedLengthRecordDataset (the formats of
// devices/data/record_file.hpp). Files open when the iterator reaches them: a missing file is
// NotFound naming it. TFRecords and text lines may be ZLIB or GZIP compressed. And MatchingFiles,
// the files a glob pattern names.
#include <glob.h>

#include <algorithm>

#include "troupe/devices/data/dataset_kernel.hpp"
#include "troupe/devices/data/record_file.hpp"

namespace troupe::data {
namespace {

class FileDataset : public DatasetBase {
 public:
  FileDataset(std::string node, RecordFormat format, std::vector<std::string> files,
              RecordLayout layout)
      : DatasetBase(std::move(node), {DataType::kString}),
        format_(format),
        files_(std::move(files)),
        layout_(layout) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<FileDataset>());
  }

 private:
  // Reads the files in order; one file is open at a time.
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const FileDataset> dataset) : dataset_(std::move(dataset)) {}

    Status get_next(Element* out, bool* end) override {
      std::string record, key;
      for (;;) {
        if (file_ == nullptr) {
          if (next_file_ >= dataset_->files_.size()) {
            *end = true;
            return Status::OK();
          }
          TROUPE_ASSIGN_OR_RETURN(
              file_, RecordFile::open(dataset_->format_, dataset_->files_[next_file_++],
                                      dataset_->layout_, dataset_->node()));
        }
        bool file_end = false;
        TROUPE_RETURN_IF_ERROR(file_->read(&record, &key, &file_end));
        if (!file_end) break;
        file_.reset();
      }
      *end = false;
      *out = {Tensor(record)};
      return Status::OK();
    }

   private:
    std::shared_ptr<const FileDataset> dataset_;
    size_t next_file_ = 0;
    std::unique_ptr<RecordFile> file_;
  };

  RecordFormat format_;
  std::vector<std::string> files_;
  RecordLayout layout_;
};

class FileDatasetKernel : public DatasetOpKernel {
 public:
  FileDatasetKernel(const OpKernelConstruction& c, RecordFormat format)
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
    RecordLayout fixed;
    if (format_ == RecordFormat::kFixedLength) {
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
      auto parsed = parse_tfrecord_compression(compression);
      if (!parsed.ok()) return invalid(ctx, "{}", parsed.status().message());
      fixed.compression = *parsed;
    }
    return new_dataset<FileDataset>(node().name(), format_, std::move(files), fixed);
  }

 private:
  RecordFormat format_;
};

template <RecordFormat format>
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
  must_add_kernel(r, "TFRecordDataset", kCpu, file_kernel<RecordFormat::kTFRecord>());
  must_add_kernel(r, "TextLineDataset", kCpu, file_kernel<RecordFormat::kTextLine>());
  must_add_kernel(r, "FixedLengthRecordDataset", kCpu, file_kernel<RecordFormat::kFixedLength>());
}

}  // namespace troupe::data
