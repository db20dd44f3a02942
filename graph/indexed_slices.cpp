// IndexedSlices: densifying, concatenating and deduplicating sparse gradients.
#include "troupe/graph/indexed_slices.hpp"

#include "troupe/graph/gradients/standard_gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

// Dimension 0 of `dense_shape`: a constant when dense_shape is a Const, else a node.
Input first_dim(const Scope& s, const Output& dense_shape) {
  if (const auto dims = constant_ints(dense_shape); dims && !dims->empty()) {
    return dense_shape.dtype() == DataType::kInt32 ? Input(static_cast<int32_t>(dims->front()))
                                                   : Input(dims->front());
  }
  return ops::Reshape(s, ops::Slice(s, dense_shape, {int32_t{0}}, {int32_t{1}}),
                      Tensor::from_vector<int32_t>({}));
}

Output as_int64(const Scope& s, const Output& indices) {
  return indices.dtype() == DataType::kInt64 ? indices : ops::Cast(s, indices, DataType::kInt64);
}

}  // namespace

Output to_dense(const Scope& scope, const Gradient& gradient) {
  if (!gradient.is_sparse()) return gradient.dense();
  const IndexedSlices& slices = gradient.slices();
  Scope s = scope.sub_scope("to_dense");
  return ops::UnsortedSegmentSum(s, slices.values, slices.indices,
                                 first_dim(s, slices.dense_shape));
}

IndexedSlices concat_slices(const Scope& scope, const std::vector<IndexedSlices>& parts) {
  if (parts.size() == 1) return parts[0];
  bool mixed = false;
  for (const IndexedSlices& p : parts)
    mixed = mixed || p.indices.dtype() != parts[0].indices.dtype();
  std::vector<Input> values, indices;
  for (const IndexedSlices& p : parts) {
    values.emplace_back(p.values);
    indices.emplace_back(mixed ? as_int64(scope, p.indices) : p.indices);
  }
  return {ops::ConcatV2(scope, values, int32_t{0}), ops::ConcatV2(scope, indices, int32_t{0}),
          parts[0].dense_shape};
}

IndexedSlices deduplicate(const Scope& scope, const IndexedSlices& slices) {
  Scope s = scope.sub_scope("deduplicate");
  const auto unique = ops::Unique(s, slices.indices);
  const Output summed = ops::UnsortedSegmentSum(s, slices.values, unique.idx,
                                                ops::Size(s, unique.y, DataType::kInt32));
  return {summed, unique.y, slices.dense_shape};
}

}  // namespace troupe
