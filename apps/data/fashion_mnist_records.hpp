// Fashion-MNIST as TFRecord files of tf.train.Example records, as TensorFlow programs store
// their data: `troupe data fashion-mnist --to=DIR` writes them, `troupe train
// --data=tfrecord:DIR` trains from them through a tf.data pipeline of graph ops.
//
// Files: DIR/<split>-<i>-of-<n>.tfrecord for split "train" and "test", i in 00000..n-1;
// example j of the split is in shard j % n. Each record is the Example TensorFlow's
// convert_to_records.py writes (and its fully_connected_reader.py reads):
//   "height", "width", "depth": Int64List, 28, 28 and 1
//   "label": Int64List, one value in 0..9
//   "image_raw": BytesList, one value: the 784 pixels row by row, one byte each (decode_raw
//                as uint8).
#pragma once

#include <string>
#include <vector>

#include "troupe/apps/data/fashion_mnist.hpp"
#include "troupe/graph/scope.hpp"

namespace troupe {

// Writes `data` (images in [0, 1], as load_fashion_mnist gives them) as `shards` files of
// `split` in `dir` (created if missing). InvalidArgument for shards < 1 or a bad split name;
// errno statuses naming the file for I/O failures. Returns the files written.
StatusOr<std::vector<std::string>> write_fashion_mnist_records(const Dataset& data,
                                                               const std::string& dir,
                                                               const std::string& split,
                                                               int shards);

// The files of `split` in `dir`, in shard order. NotFound naming the directory and the
// command that makes them when there are none; FailedPrecondition when the shard count of
// the names disagrees, a shard is missing, or the first record is of the int64 "image"
// format troupe wrote before; DataLoss when it is no Fashion-MNIST Example.
StatusOr<std::vector<std::string>> fashion_mnist_record_files(const std::string& dir,
                                                              const std::string& split);

// How many records `files` hold (every record read and its CRCs checked).
StatusOr<int64_t> count_records(const std::vector<std::string>& files);

// Every example of `split`, read back into memory (the evaluation's test set). DataLoss
// naming the file and record for a corrupt one or an Example without the two features.
StatusOr<Dataset> read_fashion_mnist_records(const std::string& dir, const std::string& split);

struct RecordBatches {
  Output images;  // float32 [batch_size, 784] in [0, 1]
  Output labels;  // int64 [batch_size]
};

// The training input as graph ops under `scope` (so on the device its device function gives):
// TFRecordDataset(files) -> ShardDataset(num_shards, shard_index) -> ShuffleDataset(seeded)
// -> RepeatDataset(forever) -> BatchDataset(batch_size, drop_remainder) -> MapDataset(parse
// the batch: ParseExample, DecodeRaw as uint8, then pixels / 255) -> PrefetchDataset(2) ->
// OneShotIterator ->
// IteratorGetNext.
RecordBatches fashion_mnist_record_batches(const Scope& scope,
                                           const std::vector<std::string>& files, int shard_index,
                                           int num_shards, int64_t batch_size, uint64_t seed);

}  // namespace troupe
