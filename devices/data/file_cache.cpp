// The file cache: a writing iterator (lock, data, index last) and a reading one.
#include "troupe/devices/data/file_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "troupe/graph/core/logging.hpp"
#include "troupe/graph/core/tensor_codec.hpp"
#include "troupe/graph/core/tfrecord.hpp"

namespace troupe::data {
namespace {

constexpr const char* kIndexMagic = "troupe dataset cache 1";

std::string index_path(const std::string& prefix) {
  return prefix + ".index";
}
std::string data_path(const std::string& prefix) {
  return prefix + ".data";
}
std::string lock_path(const std::string& prefix) {
  return prefix + ".lockfile";
}

Status io_error(int err, std::string_view what, const std::string& path, const std::string& node) {
  std::string text = fmt::format("node '{}' (CacheDataset): cannot {} '{}': {}", node, what, path,
                                 std::strerror(err));
  if (err == ENOENT) return errors::NotFound("{}", text);
  if (err == EACCES || err == EPERM) return errors::PermissionDenied("{}", text);
  if (err == ENOSPC || err == EDQUOT) return errors::ResourceExhausted("{}", text);
  return errors::Internal("{}", text);
}

// fsync of the folder holding `path`, so that a rename into it is durable.
Status sync_folder_of(const std::string& path, const std::string& node) {
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error(errno, "open the folder of", path, node);
  int synced = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (synced != 0) return io_error(err, "fsync the folder of", path, node);
  return Status::OK();
}

struct Index {
  int64_t elements = 0;
  std::vector<DataType> types;
};

std::string index_text(const Index& index) {
  std::string text = fmt::format("{}\nelements {}\ntypes", kIndexMagic, index.elements);
  for (DataType type : index.types)
    text += fmt::format(" {}", dtype_name(type));
  return text + "\n";
}

StatusOr<Index> read_index(const std::string& path, const std::string& node) {
  std::ifstream in(path);
  if (!in) return io_error(errno, "open", path, node);
  auto damaged = [&](std::string_view what) {
    return errors::DataLoss("node '{}' (CacheDataset): cache index '{}' is damaged ({})", node,
                            path, what);
  };
  std::string magic, word, type;
  Index index;
  if (!std::getline(in, magic) || magic != kIndexMagic) return damaged("not a cache index");
  if (!(in >> word >> index.elements) || word != "elements" || index.elements < 0) {
    return damaged("no element count");
  }
  if (!(in >> word) || word != "types") return damaged("no types");
  while (in >> type) {
    auto parsed = parse_dtype(type);
    if (!parsed.ok()) return damaged(fmt::format("type '{}'", type));
    index.types.push_back(*parsed);
  }
  return index;
}

// Writes `text` to `path` durably: a temporary file beside it, fsynced, renamed into place,
// the folder fsynced.
Status write_durably(const std::string& path, const std::string& text, const std::string& node) {
  const std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(errno, "create", temporary, node);
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int err = errno;
  if (written && ::fsync(fd) != 0) {
    written = false;
    err = errno;
  }
  ::close(fd);
  if (!written || std::rename(temporary.c_str(), path.c_str()) != 0) {
    if (written) err = errno;
    std::remove(temporary.c_str());
    return io_error(err, "write", path, node);
  }
  return sync_folder_of(path, node);
}

class FileCacheDataset : public DatasetBase {
 public:
  FileCacheDataset(std::string node, std::shared_ptr<const DatasetBase> input, std::string prefix)
      : DatasetBase(std::move(node), input->output_types()),
        input_(std::move(input)),
        prefix_(std::move(prefix)) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    std::error_code error;
    if (std::filesystem::exists(index_path(prefix_), error)) {
      return std::make_unique<Reader>(
          std::static_pointer_cast<const FileCacheDataset>(shared_from_this()));
    }
    return std::make_unique<Writer>(
        std::static_pointer_cast<const FileCacheDataset>(shared_from_this()));
  }

 private:
  // Reads the elements back from a complete cache.
  class Reader : public IteratorBase {
   public:
    explicit Reader(std::shared_ptr<const FileCacheDataset> dataset)
        : dataset_(std::move(dataset)) {}

    Status get_next(Element* out, bool* end) override {
      const std::string& node = dataset_->node();
      if (!records_) TROUPE_RETURN_IF_ERROR(open());
      *end = next_ == elements_;
      if (*end) return Status::OK();
      out->clear();
      for (size_t i = 0; i < dataset_->output_types().size(); ++i) {
        std::string record;
        bool file_end = false;
        TROUPE_RETURN_IF_ERROR(records_->read(&record, &file_end));
        if (file_end || record.size() % sizeof(capnp::word) != 0) {
          return errors::DataLoss(
              "node '{}' (CacheDataset): cache file '{}' is damaged: element {} of {} {}", node,
              records_->path(), next_, elements_, file_end ? "is missing" : "is not a tensor");
        }
        auto flat = std::make_shared<kj::Array<capnp::word>>(
            kj::heapArray<capnp::word>(record.size() / sizeof(capnp::word)));
        std::memcpy(flat->begin(), record.data(), record.size());
        auto tensor = parse_tensor(flat);
        if (!tensor.ok() || tensor->dtype() != dataset_->output_types()[i]) {
          return errors::DataLoss(
              "node '{}' (CacheDataset): cache file '{}' is damaged: element {} component {} "
              "is not a {} tensor{}",
              node, records_->path(), next_, i, dtype_name(dataset_->output_types()[i]),
              tensor.ok() ? "" : " (" + tensor.status().message() + ")");
        }
        out->push_back(std::move(tensor).value());
      }
      ++next_;
      return Status::OK();
    }

   private:
    Status open() {
      const std::string& prefix = dataset_->prefix_;
      TROUPE_ASSIGN_OR_RETURN(Index index, read_index(index_path(prefix), dataset_->node()));
      if (index.types != dataset_->output_types()) {
        return errors::InvalidArgument(
            "node '{}' (CacheDataset): the cache '{}' holds elements of {}, the dataset's are "
            "{} (a cache of another pipeline: give this one another file name)",
            dataset_->node(), index_path(prefix), types_string(index.types),
            types_string(dataset_->output_types()));
      }
      TROUPE_ASSIGN_OR_RETURN(TFRecordReader reader,
                              TFRecordReader::open(data_path(prefix), "dataset cache file"));
      records_.emplace(std::move(reader));
      elements_ = index.elements;
      return Status::OK();
    }

    std::shared_ptr<const FileCacheDataset> dataset_;
    std::optional<TFRecordReader> records_;
    int64_t elements_ = 0;
    int64_t next_ = 0;
  };

  // Reads the input, hands each element on and appends it to a data file of its own; at the
  // input's end renames it into place, then writes the index.
  class Writer : public IteratorBase {
   public:
    explicit Writer(std::shared_ptr<const FileCacheDataset> dataset)
        : dataset_(std::move(dataset)),
          temporary_(fmt::format("{}.tmp-{}-{}", data_path(dataset_->prefix_), ::getpid(),
                                 next_writer_id())) {}

    ~Writer() override {
      if (!locked_ || finished_) return;
      if (file_ != nullptr) std::fclose(file_);
      std::remove(temporary_.c_str());  // only its own file: never a complete cache's
      std::remove(lock_path(dataset_->prefix_).c_str());
      if (!failure_.ok()) return;  // the error said why
      log_warning(
          "node '{}' (CacheDataset): the calling iterator did not fully read the dataset being "
          "cached in '{}'. In order to avoid unexpected truncation of the dataset, the "
          "partially cached contents of the dataset will be discarded. This can happen if you "
          "have an input pipeline similar to `dataset.cache().take(k).repeat()`. You should "
          "use `dataset.take(k).cache().repeat()` instead.",
          dataset_->node(), dataset_->prefix_);
    }

    Status get_next(Element* out, bool* end) override {
      if (reader_ != nullptr) return reader_->get_next(out, end);
      if (!failure_.ok()) return failure_;  // a file half written: no more writing
      if (finished_) {
        *end = true;
        return Status::OK();
      }
      failure_ = next(out, end);
      return failure_;
    }

   private:
    static int64_t next_writer_id() {
      static std::atomic<int64_t> id{0};
      return id++;
    }

    Status next(Element* out, bool* end) {
      if (!locked_) {
        TROUPE_RETURN_IF_ERROR(start());
        if (reader_ != nullptr) return reader_->get_next(out, end);
      }
      if (input_ == nullptr) input_ = dataset_->input_->make_iterator();
      TROUPE_RETURN_IF_ERROR(input_->get_next(out, end));
      if (*end) return finish();
      for (const Tensor& component : *out) {
        kj::Array<capnp::word> flat = serialize_tensor(component);
        std::string frame = tfrecord_frame(std::string_view(
            reinterpret_cast<const char*>(flat.begin()), flat.size() * sizeof(capnp::word)));
        if (std::fwrite(frame.data(), 1, frame.size(), file_) != frame.size()) {
          return io_error(errno, "write", temporary_, dataset_->node());
        }
      }
      ++elements_;
      return Status::OK();
    }

    // Takes the lock file and opens the data file; or, when another iterator completed the
    // cache since this one was made, reads it instead.
    Status start() {
      const std::string& prefix = dataset_->prefix_;
      const std::string lock = lock_path(prefix);
      int fd = ::open(lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0 && errno == EEXIST) {
        std::ifstream held(lock);
        std::stringstream contents;
        contents << held.rdbuf();
        return errors::AlreadyExists(
            "node '{}' (CacheDataset): There appears to be a concurrent caching iterator "
            "running - cache lockfile already exists ('{}'). If you are sure no other running "
            "TF computations are using this cache prefix, delete the lockfile and re-initialize "
            "the iterator. Lockfile contents: {}",
            dataset_->node(), lock, contents.str());
      }
      if (fd < 0) return io_error(errno, "create the lock file", lock, dataset_->node());
      std::string created = fmt::format("Created at: {}", std::time(nullptr));
      bool written =
          ::write(fd, created.data(), created.size()) == static_cast<ssize_t>(created.size());
      ::close(fd);
      locked_ = true;
      if (!written) return io_error(errno, "write the lock file", lock, dataset_->node());
      std::error_code error;
      if (std::filesystem::exists(index_path(prefix), error)) {
        std::remove(lock.c_str());
        finished_ = true;  // nothing of its own to discard
        reader_ = std::make_unique<Reader>(dataset_);
        return Status::OK();
      }
      file_ = std::fopen(temporary_.c_str(), "wb");
      if (file_ == nullptr) return io_error(errno, "create", temporary_, dataset_->node());
      return Status::OK();
    }

    // The data made durable and renamed into place, then the index: the cache is complete.
    Status finish() {
      const std::string& prefix = dataset_->prefix_;
      bool flushed = std::fflush(file_) == 0 && ::fsync(fileno(file_)) == 0;
      int err = errno;
      bool closed = std::fclose(file_) == 0;
      if (flushed && !closed) err = errno;
      file_ = nullptr;
      if (!flushed || !closed) return io_error(err, "write", temporary_, dataset_->node());
      if (std::rename(temporary_.c_str(), data_path(prefix).c_str()) != 0) {
        return io_error(errno, "rename into place", temporary_, dataset_->node());
      }
      // From here on the data file is the cache's, whatever happens to the index: a writer
      // that fails now leaves data without an index, which the next one replaces.
      finished_ = true;
      Status indexed = write_durably(
          index_path(prefix), index_text({elements_, dataset_->output_types()}), dataset_->node());
      std::remove(lock_path(prefix).c_str());
      return indexed;
    }

    std::shared_ptr<const FileCacheDataset> dataset_;
    std::string temporary_;
    std::unique_ptr<IteratorBase> input_;
    std::unique_ptr<IteratorBase> reader_;  // the cache was completed meanwhile
    std::FILE* file_ = nullptr;
    bool locked_ = false;
    bool finished_ = false;
    Status failure_;
    int64_t elements_ = 0;
  };

  std::shared_ptr<const DatasetBase> input_;
  std::string prefix_;
};

}  // namespace

std::shared_ptr<const DatasetBase> make_file_cache_dataset(std::string node,
                                                           std::shared_ptr<const DatasetBase> input,
                                                           std::string filename) {
  return std::make_shared<FileCacheDataset>(std::move(node), std::move(input), std::move(filename));
}

}  // namespace troupe::data
