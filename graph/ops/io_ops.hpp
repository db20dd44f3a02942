// Builders for the ops that write and read checkpoints on a task's file system: SaveV2 (what a
// sharded Saver runs on each task holding variables) and RestoreV2 (what it, and
// tf.train.init_from_checkpoint, read with), as TensorFlow's, over troupe's .npz checkpoints
// (graph/formats/checkpoint_files.hpp, docs/checkpoints.md).
#pragma once

#include <vector>

#include "troupe/graph/core/types.hpp"
#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

// Reads tensors `tensor_names` (a string vector) of the checkpoint `prefix` (a string scalar:
// the prefix Saver::save returned, its ".npz" file, or one of its shard files; one archive or
// a set of shards, checkpoint_files.hpp), each of the
// dtype given in `dtypes` and, for each non-empty entry of `shape_and_slices` (a string vector
// as long), only the slice it names (graph/formats/tensor_slice.hpp). Run where the file is:
// the kernel reads it on the device the node is placed on; slices are assembled from the
// slices stored. At run time: NotFound for a missing
// file or tensor, InvalidArgument for a dtype, shape or slice that does not match, DataLoss
// for a damaged archive — each naming the node, the file and the tensor.
// Writes `tensors` to "<prefix>.npz" (`prefix` a string scalar), durably and atomically, as an
// .npz archive whose arrays are named `tensor_names` (a string vector, one per tensor); where
// `shape_and_slices` (as long) has a non-empty spec, the tensor is that slice of a larger one
// and is stored under "<name>@<spec>". Runs where it is placed: the file is written on that
// device's task. At run time: InvalidArgument naming the node for a spec that does not parse
// or does not match its tensor's shape, a duplicate or empty name; the file system's errors
// naming the file (ResourceExhausted for a full disk); on failure no file is left behind.
Operation SaveV2(const Scope& scope, const Input& prefix, const Input& tensor_names,
                 const Input& shape_and_slices, const std::vector<Input>& tensors);

std::vector<Output> RestoreV2(const Scope& scope, const Input& prefix, const Input& tensor_names,
                              const Input& shape_and_slices, const std::vector<DataType>& dtypes);

}  // namespace troupe::ops
