// cache(filename): a dataset's elements kept in files, as tf.data's file cache keeps them.
//
// An iterator made while "<filename>.index" does not exist writes: it reads the input, hands
// on each element and appends it to "<filename>.data" (TFRecord framing, each component a
// Cap'n Proto tensor, graph/core/tensor_codec.hpp), holding "<filename>.lockfile" meanwhile.
// At the input's end it fsyncs the data, writes the index (element count and dtypes) to a
// temporary file, fsyncs it, renames it into place and fsyncs the folder, then removes the
// lock: the index exists only beside complete data. An iterator made once the index exists
// reads the elements back, in this process or in a later run of the program, without
// running the input.
//
// As TensorFlow's: a second writer while the lock file exists is AlreadyExists naming it (two
// pipelines must not fill one cache; delete a stale lock file by hand); a writer destroyed
// before the end discards what it wrote, with TensorFlow's warning (`cache().take(k)` never
// completes a cache: `take(k).cache()` does). A cache of other dtypes than the dataset's is
// InvalidArgument, damaged data DataLoss, both naming the file.
#pragma once

#include <memory>
#include <string>

#include "troupe/devices/data/dataset.hpp"

namespace troupe::data {

std::shared_ptr<const DatasetBase> make_file_cache_dataset(std::string node,
                                                           std::shared_ptr<const DatasetBase> input,
                                                           std::string filename);

}  // namespace troupe::data
