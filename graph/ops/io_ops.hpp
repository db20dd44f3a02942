// Builders for the ops that read checkpoints from a task's file system: RestoreV2, as
// TensorFlow's (what tf.train.init_from_checkpoint makes a variable's initializer read), over
// troupe's .npz checkpoints (docs/checkpoints.md).
#pragma once

#include <vector>

#include "troupe/graph/core/types.hpp"
#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

// Reads tensors `tensor_names` (a string vector) of the checkpoint `prefix` (a string scalar:
// the prefix Saver::save returned, its ".npz" file, or that file's name itself), each of the
// dtype given in `dtypes` and, for each non-empty entry of `shape_and_slices` (a string vector
// as long), only the slice it names (graph/formats/tensor_slice.hpp). Run where the file is:
// the kernel reads it on the device the node is placed on. At run time: NotFound for a missing
// file or tensor, InvalidArgument for a dtype, shape or slice that does not match, DataLoss
// for a damaged archive — each naming the node, the file and the tensor.
std::vector<Output> RestoreV2(const Scope& scope, const Input& prefix, const Input& tensor_names,
                              const Input& shape_and_slices, const std::vector<DataType>& dtypes);

}  // namespace troupe::ops
