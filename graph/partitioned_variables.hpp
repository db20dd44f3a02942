// Partitioned variables and embedding lookups, as TensorFlow 1.x's
// tf.get_variable(..., partitioner=tf.fixed_size_partitioner(n)) and
// tf.nn.embedding_lookup(params, ids, partition_strategy="div"): a [rows, width] table held as
// n variables ("<name>/part_<i>", each recording its slice of "<name>": a checkpoint holds the
// table whole and restores into any number of shards) of consecutive rows, which a device
// function such as
// replica_device_setter places one per ps task, round-robin; a lookup gathers each shard's
// rows where the shard lives, so only the rows looked up move, and its gradient reaches each
// shard as IndexedSlices of those rows (the optimizers' sparse updates).
//
//   auto table = make_partitioned_variable(placed, "embeddings", {1000000, 16}, /*shards=*/2,
//       [](const Scope& s, const TensorShape& shape, int) {
//         return ops::Mul(s, ops::TruncatedNormal(s, shape.dims(), DataType::kFloat), 0.05f);
//       });
//   Output vectors = embedding_lookup(placed, *table, ids);  // ids.shape + [16]
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "troupe/graph/variables.hpp"

namespace troupe {

struct PartitionedVariable {
  std::string name;
  TensorShape shape;                  // the whole table's: [rows, ...]
  std::vector<ModelVariable> shards;  // consecutive rows, the first rows % n shards one longer
};

// The initial value of shard `index`, of `shape`, built in `scope` (on the shard's device, as
// make_variable with an InitialValueFn builds it).
using ShardInitializer =
    std::function<Output(const Scope& scope, const TensorShape& shape, int index)>;

// A table of `shape` (rank >= 1, fully known) in `num_shards` variables, split along the first
// dimension as fixed_size_partitioner splits it (TensorFlow's: rows / n each, the first
// rows % n shards one more). InvalidArgument naming the variable for a rank-0 shape or a
// number of shards outside [1, rows]; the scope's error for an initial value not of `dtype`
// and the shard's shape.
StatusOr<PartitionedVariable> make_partitioned_variable(const Scope& scope, const std::string& name,
                                                        const TensorShape& shape, int num_shards,
                                                        const ShardInitializer& initial_value,
                                                        DataType dtype = DataType::kFloat);

// The rows `ids` (int32 or int64, any shape) of `table`: ids.shape + table.shape[1:]. Row r
// lives in shard p = max(r / (rows / n + 1), (r - rows % n) / (rows / n)) ("div"), gathered
// there (each shard's gather is colocated with it) and stitched back in the order of ids. An
// id outside [0, rows) fails the step with InvalidArgument from the partition or the gather.
Output embedding_lookup(const Scope& scope, const PartitionedVariable& table, const Output& ids);

}  // namespace troupe
