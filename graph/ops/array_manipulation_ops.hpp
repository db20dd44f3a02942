// Array manipulation ops, as TensorFlow 1.x defines them: joining and splitting (ConcatV2,
// ConcatOffset, Split, SplitV, Unpack), selecting (Slice, StridedSlice, StridedSliceGrad),
// padding (Pad, PadV2), reordering (Transpose, InvertPermutation, ReverseV2, ReverseSequence,
// Tile), changing
// the rank (ExpandDims, Squeeze), and making (OneHot, Range, Rank). Their shape functions check
// what is known before a step; the kernels check the rest (devices/cpu/).
#pragma once

#include <vector>

#include "troupe/graph/node_builder.hpp"
#include "troupe/graph/ops/strided_slice_spec.hpp"

namespace troupe::ops {

Output ConcatV2(const Scope& scope, const std::vector<Input>& values, const Input& axis);
// Where each of `shapes` starts in their concatenation along `concat_dim` (ConcatV2's gradient).
std::vector<Output> ConcatOffset(const Scope& scope, const Input& concat_dim,
                                 const std::vector<Input>& shapes);
std::vector<Output> Split(const Scope& scope, const Input& axis, const Input& value,
                          int64_t num_split);
std::vector<Output> SplitV(const Scope& scope, const Input& value, const Input& size_splits,
                           const Input& axis, int64_t num_split);
std::vector<Output> Unpack(const Scope& scope, const Input& value, int64_t num, int64_t axis = 0);

Output Slice(const Scope& scope, const Input& input, const Input& begin, const Input& size);
Output StridedSlice(const Scope& scope, const Input& input, const Input& begin, const Input& end,
                    const Input& strides, const StridedSliceMasks& masks = {});
// dy placed where StridedSlice took it from, in zeros of `shape`.
Output StridedSliceGrad(const Scope& scope, const Input& shape, const Input& begin,
                        const Input& end, const Input& strides, const Input& dy,
                        const StridedSliceMasks& masks = {});

// paddings: an [rank, 2] integer matrix of (before, after) counts; PadV2 pads with
// `constant_values` (a scalar) instead of zeros.
Output Pad(const Scope& scope, const Input& input, const Input& paddings);
Output PadV2(const Scope& scope, const Input& input, const Input& paddings,
             const Input& constant_values);

Output Transpose(const Scope& scope, const Input& x, const Input& perm);
Output InvertPermutation(const Scope& scope, const Input& x);
Output ReverseV2(const Scope& scope, const Input& tensor, const Input& axis);
// Reverses the first seq_lengths[b] (int32 or int64) elements along seq_dim of each batch entry
// b (along batch_dim); the rest is kept. A length above the dimension is InvalidArgument.
Output ReverseSequence(const Scope& scope, const Input& input, const Input& seq_lengths,
                       int64_t seq_dim, int64_t batch_dim = 0);
Output Tile(const Scope& scope, const Input& input, const Input& multiples);

Output ExpandDims(const Scope& scope, const Input& input, const Input& axis);
// `axis` empty: every dimension of size 1.
Output Squeeze(const Scope& scope, const Input& input, const std::vector<int64_t>& axis = {});

Output OneHot(const Scope& scope, const Input& indices, const Input& depth, const Input& on_value,
              const Input& off_value, int64_t axis = -1);
Output Range(const Scope& scope, const Input& start, const Input& limit, const Input& delta);
Output Rank(const Scope& scope, const Input& input);

}  // namespace troupe::ops
