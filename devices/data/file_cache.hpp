// cache(filename): a dataset's elements kept in files, as tf.data's file cache keeps them.
//
// An iterator made while "<filename>.index" does not exist writes: at its first element it
// takes "<filename>.lockfile" (or, if the cache was completed meanwhile, reads it), then reads
// the input, hands on each element and appends it to a data file of its own (TFRecord
// framing, each component a Cap'n Proto tensor, graph/core/tensor_codec.hpp). At the input's
// end it fsyncs that file and renames it to "<filename>.data", writes the index (element count
// and dtypes) to a temporary file, fsyncs it, renames it into place and fsyncs the folder,
// then removes the lock: the index exists only beside complete data, and no writer ever
// touches a complete cache's data file. An iterator made once the index exists reads the
// elements back, in this process or in a later run of the program, without running the input.
//
// A second writer while the lock file exists is AlreadyExists naming it, with TensorFlow's
// message (two pipelines must not fill one cache; delete a stale lock file by hand); a writer
// destroyed before the end discards its file, with the warning TensorFlow 2 gives
// (`cache().take(k)` never completes a cache: `take(k).cache()` does); a writer that failed
// keeps failing. A cache of other dtypes than the dataset's is InvalidArgument, damaged data
// DataLoss, both naming the file.
#pragma once

#include <memory>
#include <string>

#include "troupe/devices/data/dataset.hpp"

namespace troupe::data {

std::shared_ptr<const DatasetBase> make_file_cache_dataset(std::string node,
                                                           std::shared_ptr<const DatasetBase> input,
                                                           std::string filename);

}  // namespace troupe::data
