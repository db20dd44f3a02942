// Fashion-MNIST: loading the IDX files (gzip-compressed, as Debian's dataset-fashion-mnist
// package ships them) and cutting one worker's shard of it into shuffled batches for
// data-parallel training.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

// Where `apt-get install dataset-fashion-mnist` puts the files.
inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

inline constexpr int kFashionMnistImageSize = 28;
inline constexpr int kFashionMnistPixels = kFashionMnistImageSize * kFashionMnistImageSize;
inline constexpr int kFashionMnistClasses = 10;

struct Dataset {
  Tensor images;  // float32 [n, 784]: pixels row by row, scaled from 0..255 to [0, 1]
  Tensor labels;  // int64 [n], each in 0..9
  int64_t size() const { return labels.is_initialized() ? labels.dim(0) : 0; }
};

// Loads the training set (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz; 60000
// examples) or the test set (t10k-*; 10000) from `dir`. A file without the .gz (already
// unpacked) is used when the .gz is missing. NotFound for a missing file, with how to get it;
// DataLoss naming the file for anything wrong in one (gzip error, IDX magic number other than
// 0x00000803 / 0x00000801, images not 28x28, truncation or trailing bytes, a label outside
// 0..9) or between the two (different counts).
StatusOr<Dataset> load_fashion_mnist(const std::string& dir, bool train);

// One worker's shard of a data set, in full batches, reshuffled every epoch.
//
// The shard is examples i with i % num_shards == shard_index, so the shards of num_shards
// workers partition the data set. At the start of every epoch the shard's order is shuffled
// (Fisher-Yates over std::mt19937_64 seeded by std::seed_seq{seed, epoch}, with an unbiased
// bounded draw of our own, so the order is the same on every platform and standard library).
// Batches are always full: a batch that runs past the end of an epoch takes the rest of its
// examples from the start of the next epoch's order (nothing is dropped, and within an epoch
// every example of the shard appears exactly once).
class ShardedBatches {
 public:
  // InvalidArgument if `data` is not images float32 [n, d] with labels int64 [n],
  // num_shards < 1, shard_index outside [0, num_shards), batch_size < 1, or the shard is
  // empty. `data`'s buffers are shared, not copied.
  static StatusOr<ShardedBatches> create(const Dataset& data, int shard_index, int num_shards,
                                         int batch_size, uint64_t seed);

  // The next batch: *images float32 [batch_size, d], *labels int64 [batch_size], fresh
  // tensors. *epoch_ended (if given) tells whether this batch finished an epoch.
  void next(Tensor* images, Tensor* labels, bool* epoch_ended = nullptr);

  // The epoch the next example comes from, from 0.
  int64_t epoch() const { return epoch_; }
  // The shard's size: examples per epoch of this worker.
  int64_t examples_per_epoch() const { return static_cast<int64_t>(order_.size()); }

  // The shard's example indices (into `data`) in epoch `epoch`'s order.
  std::vector<int64_t> epoch_order(int64_t epoch) const;

 private:
  ShardedBatches(const Dataset& data, int batch_size, uint64_t seed, std::vector<int64_t> shard);

  Dataset data_;
  int64_t width_;
  int batch_size_;
  uint64_t seed_;
  std::vector<int64_t> shard_;  // the shard's indices, ascending
  std::vector<int64_t> order_;  // this epoch's order
  size_t position_ = 0;         // next index into order_
  int64_t epoch_ = 0;
};

}  // namespace troupe
