// Partitioned variables and the "div" embedding lookup (partitioned_variables.hpp).
#include "troupe/graph/partitioned_variables.hpp"

#include <algorithm>

#include "troupe/graph/ops/ops.hpp"

namespace troupe {

StatusOr<PartitionedVariable> make_partitioned_variable(const Scope& scope, const std::string& name,
                                                        const TensorShape& shape, int num_shards,
                                                        const ShardInitializer& initial_value,
                                                        DataType dtype) {
  if (shape.rank() < 1) {
    return errors::InvalidArgument(
        "partitioned variable '{}': a shape of rank >= 1 is needed to "
        "partition along its first dimension, got {}",
        name, shape.to_string());
  }
  const int64_t rows = shape.dim(0);
  if (num_shards < 1 || num_shards > rows) {
    return errors::InvalidArgument(
        "partitioned variable '{}': {} shards of {} rows (expected 1 "
        "to {} shards)",
        name, num_shards, rows, rows);
  }
  PartitionedVariable table{name, shape, {}};
  Scope s = scope.sub_scope(name);
  int64_t first_row = 0;
  for (int i = 0; i < num_shards; ++i) {
    std::vector<int64_t> dims = shape.dims();
    dims[0] = rows / num_shards + (i < rows % num_shards ? 1 : 0);
    const std::string part = "part_" + std::to_string(i);
    const TensorShape shard_shape(dims);
    ModelVariable shard = make_variable(s, part, shard_shape, dtype, [&](const Scope& beside) {
      return initial_value(beside.sub_scope(part + "_initial_value"), shard_shape, i);
    });
    TROUPE_RETURN_IF_ERROR(scope.status());
    // Each shard records its slice of the whole: checkpoints hold the table whole under its
    // name (and its optimizer slots under "<name>/<slot>"), so they restore into any number of
    // shards, as TensorFlow's.
    const std::string& shard_name = shard.ref.node()->name();
    std::vector<int64_t> offset(shape.rank(), 0);
    offset[0] = first_row;
    TROUPE_RETURN_IF_ERROR(scope.graph().set_variable_slice(
        shard_name,
        {shard_name.substr(0, shard_name.rfind('/')), shape.dims(), std::move(offset)}));
    table.shards.push_back(shard);
    first_row += dims[0];
  }
  return table;
}

Output embedding_lookup(const Scope& scope, const PartitionedVariable& table, const Output& ids) {
  Scope s = scope.sub_scope("embedding_lookup");
  const int n = static_cast<int>(table.shards.size());
  if (n == 1) {
    return ops::GatherV2(s.colocate_with(table.shards[0].ref.op()), table.shards[0].ref, ids, 0);
  }
  Output flat = ops::Reshape(s, ids, {-1});
  // TensorFlow's "div" assignment, in the ids' own dtype: rows / n per shard, the first
  // rows % n shards one more.
  const int64_t rows = table.shape.dim(0);
  const DataType dtype = flat.dtype();
  auto constant = [&](int64_t value) {
    return dtype == DataType::kInt32 ? ops::Const(s, static_cast<int32_t>(value))
                                     : ops::Const(s, value);
  };
  Output per = constant(rows / n), extras = constant(rows % n), per_long = constant(rows / n + 1);
  Output shard = ops::Maximum(s, ops::FloorDiv(s, flat, per_long),
                              ops::FloorDiv(s, ops::Sub(s, flat, extras), per));
  Output in_long = ops::Less(s, shard, extras);
  Output local = ops::Select(s, in_long, ops::FloorMod(s, flat, per_long),
                             ops::FloorMod(s, ops::Sub(s, flat, extras), per));
  Output partitions = ops::Cast(s, shard, DataType::kInt32);
  std::vector<Output> local_ids = ops::DynamicPartition(s, local, partitions, n);
  std::vector<Output> positions =
      ops::DynamicPartition(s, ops::Range(s, 0, ops::Size(s, flat), 1), partitions, n);
  std::vector<Input> gathered, stitch_positions;
  for (int p = 0; p < n; ++p) {
    const Output& shard_ref = table.shards[p].ref;
    gathered.push_back(ops::GatherV2(s.colocate_with(shard_ref.op()), shard_ref, local_ids[p], 0));
    stitch_positions.push_back(positions[p]);
  }
  Output stitched = ops::DynamicStitch(s, stitch_positions, gathered);
  // ids.shape + the rows' shape: static where ids' shape is known but for one dimension.
  const PartialShape& ids_shape = ids.node()->output_shape(ids.index());
  std::vector<int64_t> row_dims(table.shape.dims().begin() + 1, table.shape.dims().end());
  if (ids_shape.rank_known() &&
      std::count(ids_shape.dims().begin(), ids_shape.dims().end(), -1) <= 1) {
    std::vector<int64_t> dims = ids_shape.dims();
    dims.insert(dims.end(), row_dims.begin(), row_dims.end());
    return ops::Reshape(s, stitched, Tensor::from_vector(dims));
  }
  Output row_shape = ops::Const(s, Tensor::from_vector(row_dims));
  return ops::Reshape(s, stitched,
                      ops::ConcatV2(s, {ops::Shape(s, ids, DataType::kInt64), row_shape}, 0));
}

}  // namespace troupe
