// StridedSliceSpec: TensorFlow's canonicalisation of a strided slice (sparse to dense spec,
// negative indices, masks, clamping), written for troupe.
#include "troupe/graph/ops/strided_slice_spec.hpp"

#include <algorithm>

namespace troupe {
namespace {

bool bit(int64_t mask, size_t i) {
  return i < 64 && ((mask >> i) & 1) != 0;
}

// One entry of the dense spec, before the input's dimensions are applied.
struct DenseEntry {
  int64_t begin = 0, end = 0, stride = 1;
  bool begin_masked = true, end_masked = true, shrink = false;
};

}  // namespace

StatusOr<StridedSliceSpec> make_strided_slice_spec(const std::vector<int64_t>& input_dims,
                                                   const std::vector<int64_t>& begin,
                                                   const std::vector<int64_t>& end,
                                                   const std::vector<int64_t>& strides,
                                                   const StridedSliceMasks& masks) {
  const size_t n = begin.size();
  if (end.size() != n || strides.size() != n) {
    return errors::InvalidArgument(
        "begin, end and strides must have the same length, got {}, {} and {}", n, end.size(),
        strides.size());
  }
  if (n > 64) return errors::InvalidArgument("at most 64 indices, got {}", n);
  int ellipses = 0;
  for (size_t i = 0; i < n; ++i)
    ellipses += bit(masks.ellipsis_mask, i) ? 1 : 0;
  if (ellipses > 1) return errors::InvalidArgument("multiple ellipses in slice spec not allowed");
  const size_t rank = input_dims.size();
  // Without an ellipsis, one is implied after the last index.
  const bool implied_ellipsis = ellipses == 0;
  size_t dims_named = 0;  // input dimensions the sparse spec names (not ellipsis, not new axis)
  for (size_t i = 0; i < n; ++i) {
    if (!bit(masks.ellipsis_mask, i) && !bit(masks.new_axis_mask, i)) ++dims_named;
  }
  if (dims_named > rank) {
    return errors::InvalidArgument("index of {} dimensions for a tensor of rank {}", dims_named,
                                   rank);
  }

  // The dense spec, and how the output's dimensions come from it: an input dimension (its
  // index), or a new axis (-1).
  std::vector<DenseEntry> dense(rank);
  std::vector<int64_t> output_from;
  size_t full = 0;
  auto expand_ellipsis = [&] {
    const size_t covered = rank - dims_named;
    for (size_t k = 0; k < covered; ++k, ++full)
      output_from.push_back(static_cast<int64_t>(full));  // full range, stride 1
  };
  for (size_t i = 0; i < n; ++i) {
    if (bit(masks.ellipsis_mask, i)) {
      expand_ellipsis();
    } else if (bit(masks.new_axis_mask, i)) {
      output_from.push_back(-1);
    } else {
      DenseEntry& e = dense[full];
      e.begin = begin[i];
      e.end = end[i];
      e.stride = strides[i];
      e.begin_masked = bit(masks.begin_mask, i);
      e.end_masked = bit(masks.end_mask, i);
      e.shrink = bit(masks.shrink_axis_mask, i);
      if (e.stride == 0) return errors::InvalidArgument("strides[{}] must be non-zero", i);
      if (e.shrink && e.stride < 0) {
        return errors::InvalidArgument("only stride 1 allowed on non-range indexing");
      }
      output_from.push_back(e.shrink ? -2 : static_cast<int64_t>(full));
      ++full;
    }
  }
  if (implied_ellipsis) expand_ellipsis();

  StridedSliceSpec spec;
  spec.begin.resize(rank);
  spec.strides.resize(rank);
  spec.sizes.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    const DenseEntry& e = dense[d];
    const int64_t dim = input_dims[d];
    const int64_t s = e.stride;
    spec.strides[d] = s;
    if (e.shrink) {
      int64_t at = e.begin < 0 && dim >= 0 ? e.begin + dim : e.begin;
      if (dim >= 0 && (at < 0 || at >= dim)) {
        return errors::InvalidArgument("slice index {} of dimension {} out of bounds", e.begin, d);
      }
      spec.begin[d] = at;
      spec.sizes[d] = 1;
      continue;
    }
    if (dim < 0) {  // unknown: nothing more is known of this dimension
      spec.begin[d] = e.begin;
      spec.sizes[d] = -1;
      continue;
    }
    // Canonical [b, e) for s > 0, or (e, b] for s < 0, inside the dimension.
    auto canonical = [&](int64_t x, bool masked, bool is_begin) {
      if (masked) {
        if (s > 0) return is_begin ? int64_t{0} : dim;
        return is_begin ? dim - 1 : int64_t{-1};
      }
      if (x < 0) x += dim;
      return s > 0 ? std::clamp<int64_t>(x, 0, dim) : std::clamp<int64_t>(x, -1, dim - 1);
    };
    const int64_t b = canonical(e.begin, e.begin_masked, true);
    const int64_t en = canonical(e.end, e.end_masked, false);
    const int64_t span = s > 0 ? en - b : b - en;
    const int64_t step = s > 0 ? s : -s;
    spec.begin[d] = b;
    spec.sizes[d] = span <= 0 ? 0 : (span + step - 1) / step;
  }
  for (int64_t from : output_from) {
    if (from == -1) {
      spec.output_dims.push_back(1);
    } else if (from >= 0) {
      spec.output_dims.push_back(spec.sizes[from]);
    }
  }
  return spec;
}

}  // namespace troupe
