// Builders for TensorFlow's segment reductions: the slices of `data` reduced by segment id,
// sorted (SegmentSum, SegmentMean, SegmentProd, SegmentMin, SegmentMax) or not
// (UnsortedSegmentSum, UnsortedSegmentProd, UnsortedSegmentMin, UnsortedSegmentMax); the sparse
// ones, rows of `data` chosen by `indices` and reduced by sorted `segment_ids`
// (SparseSegmentSum, SparseSegmentMean, SparseSegmentSqrtN, each with a WithNumSegments form);
// and the kernels of the Mean and SqrtN gradients.
#pragma once

#include <string_view>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

// `reduction` of the rows of data by sorted segment id ("Sum", "Mean", "Prod", "Min", "Max"):
// segment_ids (int32 or int64) is a vector as long as data's first dimension, sorted; the
// output has segment_ids[-1] + 1 rows, an empty segment 0 (1 for Prod). A negative, decreasing
// or out-of-place id is InvalidArgument with TensorFlow's message.
Output SegmentReduction(const Scope& scope, std::string_view reduction, const Input& data,
                        const Input& segment_ids);
// `reduction` ("Sum", "Prod", "Min", "Max") of the slices of data by segment id: segment_ids
// has a prefix of data's shape; the output has shape [num_segments] +
// data.shape[segment_ids.rank:]. A negative id drops its slice; an id >= num_segments is
// InvalidArgument. An empty segment is 0 (Sum), 1 (Prod), the type's highest (Min) or lowest
// (Max) value, as TensorFlow's.
Output UnsortedSegmentReduction(const Scope& scope, std::string_view reduction, const Input& data,
                                const Input& segment_ids, const Input& num_segments);
// UnsortedSegmentReduction(scope, "Sum", ...): GatherV2's gradient.
Output UnsortedSegmentSum(const Scope& scope, const Input& data, const Input& segment_ids,
                          const Input& num_segments);

// output[s] = reduce over i with segment_ids[i] == s of data[indices[i], ...], where `reduction`
// is "Sum", "Mean" (the sum over the count) or "SqrtN" (the sum over its square root).
// indices (int32 or int64) and segment_ids (int32) are vectors of one length; segment_ids are
// sorted. The output has segment_ids[-1] + 1 rows, or `num_segments` in the WithNumSegments
// form; an empty segment is zero. An index outside data's rows, a negative, decreasing or too
// large segment id is InvalidArgument naming the node and the position.
Output SparseSegmentReduction(const Scope& scope, std::string_view reduction, const Input& data,
                              const Input& indices, const Input& segment_ids);
Output SparseSegmentReductionWithNumSegments(const Scope& scope, std::string_view reduction,
                                             const Input& data, const Input& indices,
                                             const Input& segment_ids, const Input& num_segments);
Output SparseSegmentSum(const Scope& scope, const Input& data, const Input& indices,
                        const Input& segment_ids);
Output SparseSegmentMean(const Scope& scope, const Input& data, const Input& indices,
                         const Input& segment_ids);
Output SparseSegmentSqrtN(const Scope& scope, const Input& data, const Input& indices,
                          const Input& segment_ids);

// The gradient of SparseSegmentMean ("Mean") or SparseSegmentSqrtN ("SqrtN") with respect to
// data: output[indices[i], ...] += grad[segment_ids[i], ...] / count (or / sqrt(count)) of
// segment_ids[i]; output_dim0 (int32) rows, zero where no index points.
Output SparseSegmentReductionGrad(const Scope& scope, std::string_view reduction, const Input& grad,
                                  const Input& indices, const Input& segment_ids,
                                  const Input& output_dim0);

}  // namespace troupe::ops
