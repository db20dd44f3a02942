// Builders for tf.data's ops: datasets, their transformations, and iterators.
//
// A dataset op outputs a reference to an immutable dataset (a description of a sequence of
// elements, each a list of tensors); transformations take one and output another; nothing is
// read until an iterator runs. Iterator makes an iterator resource, MakeIterator (re)starts it
// on a dataset, IteratorGetNext reads the next element (OutOfRange at the end, as TensorFlow).
// OneShotIterator makes and starts an iterator on the first run and keeps it.
// Datasets, iterators and the ops that use them run on one device (reference edges colocate).
// Functions (`f` of MapDataset, FlatMapDataset and InterleaveDataset; FilterDataset's
// `predicate`) are graphs serialized as
// graph_def_codec writes them, whose _Arg nodes are the element's components followed by
// the captured arguments and whose _Retval nodes are the results (devices/graph_function.hpp).
#pragma once

#include <string>
#include <vector>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

struct DatasetShapes {
  std::vector<DataType> types;
  std::vector<PartialShape> shapes;  // empty: not declared
};

// Sources.
Output TensorSliceDataset(const Scope& scope, const std::vector<Input>& components);
Output TensorDataset(const Scope& scope, const std::vector<Input>& components);
Output RangeDataset(const Scope& scope, Input start, Input stop, Input step);
Output TFRecordDataset(const Scope& scope, Input filenames);
Output TextLineDataset(const Scope& scope, Input filenames);
Output FixedLengthRecordDataset(const Scope& scope, Input filenames, Input header_bytes,
                                Input record_bytes, Input footer_bytes);

// Transformations.
Output BatchDataset(const Scope& scope, Input dataset, Input batch_size, Input drop_remainder);
Output RepeatDataset(const Scope& scope, Input dataset, Input count);
Output TakeDataset(const Scope& scope, Input dataset, Input count);
Output SkipDataset(const Scope& scope, Input dataset, Input count);
Output ShardDataset(const Scope& scope, Input dataset, Input num_shards, Input index);
Output ShuffleDataset(const Scope& scope, Input dataset, Input buffer_size, Input seed, Input seed2,
                      bool reshuffle_each_iteration = true);
Output PrefetchDataset(const Scope& scope, Input dataset, Input buffer_size);
Output ZipDataset(const Scope& scope, Input dataset, Input other);
Output ConcatenateDataset(const Scope& scope, Input dataset, Input other);
// `function` as graph_def_codec serializes it; `output` what it returns.
Output MapDataset(const Scope& scope, Input dataset, const std::vector<Input>& captured,
                  const std::string& function, const DatasetShapes& output);
Output FilterDataset(const Scope& scope, Input dataset, const std::vector<Input>& captured,
                     const std::string& predicate);
// `function` returns a dataset of `output`'s elements for each element (a _RetvalRef result).
Output FlatMapDataset(const Scope& scope, Input dataset, const std::vector<Input>& captured,
                      const std::string& function, const DatasetShapes& output);
Output InterleaveDataset(const Scope& scope, Input dataset, const std::vector<Input>& captured,
                         Input cycle_length, Input block_length, const std::string& function,
                         const DatasetShapes& output);
// The sorted names of the files matching glob `pattern` (a string scalar or vector).
Output MatchingFiles(const Scope& scope, Input pattern);

// Iterators.
Output Iterator(const Scope& scope, const DatasetShapes& element);
Operation MakeIterator(const Scope& scope, Input dataset, Input iterator);
Output OneShotIterator(const Scope& scope, Input dataset, const DatasetShapes& element);
std::vector<Output> IteratorGetNext(const Scope& scope, Input iterator,
                                    const DatasetShapes& element);

}  // namespace troupe::ops
