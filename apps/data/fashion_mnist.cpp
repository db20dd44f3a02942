// Fashion-MNIST: IDX files through zlib's gz* API, and the sharded, shuffled batch iterator.
#include "troupe/apps/data/fashion_mnist.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <utility>

#include <fmt/format.h>

namespace troupe {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension

// The file `name` (+ ".gz", or as is if only that exists) in `dir`.
StatusOr<std::string> find_file(const std::string& dir, const std::string& name) {
  std::filesystem::path gz = std::filesystem::path(dir) / (name + ".gz");
  std::filesystem::path plain = std::filesystem::path(dir) / name;
  std::error_code ec;
  if (std::filesystem::exists(gz, ec)) return gz.string();
  if (std::filesystem::exists(plain, ec)) return plain.string();
  return errors::NotFound(
      "Fashion-MNIST file '{}' not found: install Debian's dataset-fashion-mnist package (sudo "
      "apt-get install dataset-fashion-mnist) or pass --data_dir",
      gz.string());
}

// A gzip (or plain) file read through zlib, with every failure as a Status naming it.
class GzFile {
 public:
  static StatusOr<std::unique_ptr<GzFile>> open(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (f == nullptr) {
      int err = errno;
      std::string message = fmt::format("cannot open '{}': {}", path,
                                        err != 0 ? std::strerror(err) : "out of memory");
      if (err == EACCES || err == EPERM) return Status(Code::kPermissionDenied, message);
      if (err == ENOENT) return Status(Code::kNotFound, message);
      return Status(Code::kUnknown, message);
    }
    return std::unique_ptr<GzFile>(new GzFile(path, f));
  }
  ~GzFile() { gzclose(file_); }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  // Appends exactly `n` bytes to *out; DataLoss (naming `what` is being read) if the file ends
  // first or its gzip data is corrupt. Grows *out as data arrives, so a header that claims
  // more than the file holds fails on truncation rather than on allocation.
  Status read(size_t n, std::string* out, const std::string& what) {
    constexpr size_t kChunk = 1 << 20;
    while (n > 0) {
      size_t want = std::min(n, kChunk);
      size_t old = out->size();
      out->resize(old + want);
      int got = gzread(file_, out->data() + old, static_cast<unsigned>(want));
      if (got < 0) return gz_error();
      out->resize(old + static_cast<size_t>(got));
      if (got == 0) {
        return errors::DataLoss("'{}' is truncated: it ends in the {} ({} bytes short)", path_,
                                what, n);
      }
      n -= static_cast<size_t>(got);
    }
    return Status::OK();
  }

  // DataLoss if anything follows what the header described.
  Status expect_end() {
    char extra;
    int got = gzread(file_, &extra, 1);
    if (got < 0) return gz_error();
    if (got > 0) {
      return errors::DataLoss("'{}' has bytes after the data its header describes", path_);
    }
    return Status::OK();
  }

 private:
  GzFile(std::string path, gzFile file) : path_(std::move(path)), file_(file) {}
  Status gz_error() {
    int code = 0;
    const char* message = gzerror(file_, &code);
    if (code == Z_ERRNO) {
      return errors::Unknown("cannot read '{}': {}", path_, std::strerror(errno));
    }
    return errors::DataLoss("'{}' is corrupt: {}", path_,
                            message != nullptr ? message : "gzip error");
  }

  std::string path_;
  gzFile file_;
};

uint32_t big_endian32(const std::string& bytes, size_t offset) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(bytes[offset + i])); };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}

Status check_magic(const std::string& path, uint32_t magic, uint32_t expected, const char* kind) {
  if (magic == expected) return Status::OK();
  return errors::DataLoss("'{}' is not an IDX {} file: magic number 0x{:08x}, expected 0x{:08x}",
                          path, kind, magic, expected);
}

// An unbiased draw from [0, bound) (bound >= 1), by rejection.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
  uint64_t r;
  do {
    r = rng();
  } while (r < threshold);
  return r % bound;
}

// "float32 [2,784]" for error messages.
std::string describe(const Tensor& t) {
  if (!t.is_initialized()) return "an uninitialised tensor";
  return fmt::format("{} {}", dtype_name(t.dtype()), t.shape().to_string());
}

}  // namespace

StatusOr<Dataset> load_fashion_mnist(const std::string& dir, bool train) {
  const std::string prefix = train ? "train" : "t10k";
  TROUPE_ASSIGN_OR_RETURN(std::string images_path, find_file(dir, prefix + "-images-idx3-ubyte"));
  TROUPE_ASSIGN_OR_RETURN(std::string labels_path, find_file(dir, prefix + "-labels-idx1-ubyte"));

  // Labels: magic, count, then one byte per example.
  TROUPE_ASSIGN_OR_RETURN(auto labels_file, GzFile::open(labels_path));
  std::string label_bytes;
  TROUPE_RETURN_IF_ERROR(labels_file->read(8, &label_bytes, "IDX header"));
  TROUPE_RETURN_IF_ERROR(
      check_magic(labels_path, big_endian32(label_bytes, 0), kLabelsMagic, "labels"));
  const uint32_t n = big_endian32(label_bytes, 4);
  label_bytes.clear();
  TROUPE_RETURN_IF_ERROR(labels_file->read(n, &label_bytes, "labels"));
  TROUPE_RETURN_IF_ERROR(labels_file->expect_end());

  // Images: magic, count, rows, columns, then rows * columns bytes per example.
  TROUPE_ASSIGN_OR_RETURN(auto images_file, GzFile::open(images_path));
  std::string pixel_bytes;
  TROUPE_RETURN_IF_ERROR(images_file->read(16, &pixel_bytes, "IDX header"));
  TROUPE_RETURN_IF_ERROR(
      check_magic(images_path, big_endian32(pixel_bytes, 0), kImagesMagic, "images"));
  const uint32_t image_count = big_endian32(pixel_bytes, 4);
  const uint32_t rows = big_endian32(pixel_bytes, 8), cols = big_endian32(pixel_bytes, 12);
  if (rows != kFashionMnistImageSize || cols != kFashionMnistImageSize) {
    return errors::DataLoss("'{}' holds {}x{} images, expected {}x{}", images_path, rows, cols,
                            kFashionMnistImageSize, kFashionMnistImageSize);
  }
  if (image_count != n) {
    return errors::DataLoss("'{}' holds {} images but '{}' holds {} labels", images_path,
                            image_count, labels_path, n);
  }
  pixel_bytes.clear();
  TROUPE_RETURN_IF_ERROR(
      images_file->read(static_cast<size_t>(n) * kFashionMnistPixels, &pixel_bytes, "pixels"));
  TROUPE_RETURN_IF_ERROR(images_file->expect_end());

  Dataset data;
  data.labels = Tensor(DataType::kInt64, TensorShape{n});
  int64_t* labels = data.labels.data<int64_t>();
  for (uint32_t i = 0; i < n; ++i) {
    auto label = static_cast<uint8_t>(label_bytes[i]);
    if (label >= kFashionMnistClasses) {
      return errors::DataLoss("'{}': label {} of example {} is outside 0..{}", labels_path, label,
                              i, kFashionMnistClasses - 1);
    }
    labels[i] = label;
  }
  data.images = Tensor(DataType::kFloat, TensorShape{n, kFashionMnistPixels});
  float* pixels = data.images.data<float>();
  for (size_t i = 0; i < pixel_bytes.size(); ++i) {
    pixels[i] = static_cast<float>(static_cast<uint8_t>(pixel_bytes[i])) / 255.0f;
  }
  return data;
}

StatusOr<ShardedBatches> ShardedBatches::create(const Dataset& data, int shard_index,
                                                int num_shards, int batch_size, uint64_t seed) {
  const Tensor& images = data.images;
  const Tensor& labels = data.labels;
  if (images.dtype() != DataType::kFloat || images.rank() != 2 ||
      labels.dtype() != DataType::kInt64 || labels.rank() != 1 || labels.dim(0) != images.dim(0)) {
    return errors::InvalidArgument(
        "ShardedBatches: expected images float32 [n, d] and labels int64 [n], got {} and {}",
        describe(images), describe(labels));
  }
  if (num_shards < 1 || shard_index < 0 || shard_index >= num_shards) {
    return errors::InvalidArgument(
        "ShardedBatches: shard_index {} of num_shards {}; expected 0 <= shard_index < "
        "num_shards",
        shard_index, num_shards);
  }
  if (batch_size < 1) {
    return errors::InvalidArgument("ShardedBatches: batch_size {}, expected >= 1", batch_size);
  }
  std::vector<int64_t> shard;
  for (int64_t i = shard_index; i < labels.dim(0); i += num_shards)
    shard.push_back(i);
  if (shard.empty()) {
    return errors::InvalidArgument(
        "ShardedBatches: shard {} of {} of a data set of {} examples is empty", shard_index,
        num_shards, labels.dim(0));
  }
  return ShardedBatches(data, batch_size, seed, std::move(shard));
}

ShardedBatches::ShardedBatches(const Dataset& data, int batch_size, uint64_t seed,
                               std::vector<int64_t> shard)
    : data_(data),
      width_(data.images.dim(1)),
      batch_size_(batch_size),
      seed_(seed),
      shard_(std::move(shard)) {
  order_ = epoch_order(0);
}

std::vector<int64_t> ShardedBatches::epoch_order(int64_t epoch) const {
  std::vector<int64_t> order = shard_;
  const auto e = static_cast<uint64_t>(epoch);
  std::seed_seq seq{static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32),
                    static_cast<uint32_t>(e), static_cast<uint32_t>(e >> 32)};
  std::mt19937_64 rng(seq);
  for (size_t i = order.size(); i > 1; --i) {
    size_t j = static_cast<size_t>(uniform_below(rng, i));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

void ShardedBatches::next(Tensor* images, Tensor* labels, bool* epoch_ended) {
  Tensor batch_images(DataType::kFloat, TensorShape{batch_size_, width_});
  Tensor batch_labels(DataType::kInt64, TensorShape{batch_size_});
  const float* src_images = data_.images.data<float>();
  const int64_t* src_labels = data_.labels.data<int64_t>();
  float* dst_images = batch_images.data<float>();
  int64_t* dst_labels = batch_labels.data<int64_t>();
  bool ended = false;
  for (int b = 0; b < batch_size_; ++b) {
    int64_t index = order_[position_++];
    std::memcpy(dst_images + b * width_, src_images + index * width_, width_ * sizeof(float));
    dst_labels[b] = src_labels[index];
    if (position_ == order_.size()) {
      ended = true;
      ++epoch_;
      order_ = epoch_order(epoch_);
      position_ = 0;
    }
  }
  *images = std::move(batch_images);
  *labels = std::move(batch_labels);
  if (epoch_ended != nullptr) *epoch_ended = ended;
}

}  // namespace troupe
