// Array manipulation ops: definitions, shape functions and builders.
#include "troupe/graph/ops/array_manipulation_ops.hpp"

#include <fmt/ranges.h>

#include <algorithm>

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

constexpr std::string_view kIndex = "Tidx: {int32, int64} = int32";

// The known integer values of input `i` (any rank, flattened), or nullopt.
std::optional<std::vector<int64_t>> known_ints(const InferenceContext& c, int i) {
  const Tensor* t = c.input_value(i);
  if (t == nullptr) return std::nullopt;
  if (t->dtype() == DataType::kInt32) {
    auto v = t->flat<int32_t>();
    return std::vector<int64_t>(v.begin(), v.end());
  }
  if (t->dtype() == DataType::kInt64) return t->to_vector<int64_t>();
  return std::nullopt;
}

// The known scalar axis of input `i` for a tensor of rank `rank` (`extra` more allowed above:
// ExpandDims may name rank), made non-negative; nullopt while unknown.
StatusOr<std::optional<int64_t>> known_axis(const InferenceContext& c, int i, int rank,
                                            int extra = 0) {
  if (c.input(i).rank_known() && c.input(i).rank() > 1) {
    return c.invalid("axis must be a scalar, got shape {}", c.input(i).to_string());
  }
  auto values = known_ints(c, i);
  if (!values || values->size() != 1 || rank < 0) return std::optional<int64_t>();
  int64_t axis = (*values)[0];
  const int64_t bound = rank + extra;
  if (axis < -bound || axis >= bound) {
    return c.invalid("axis {} is out of range [{}, {})", axis, -bound, bound);
  }
  return std::optional<int64_t>(axis < 0 ? axis + bound : axis);
}

// Every input of the list has one rank; dims along `axis` add up, the others must agree.
Status concat_shape(InferenceContext& c) {
  const int n = c.num_inputs() - 1;
  int rank = -1;
  for (int i = 0; i < n; ++i) {
    if (!c.input(i).rank_known()) continue;
    if (rank >= 0 && c.input(i).rank() != rank) {
      return c.invalid("all inputs must have the same rank: input 0 has rank {}, input {} has {}",
                       rank, i, c.input(i).rank());
    }
    rank = c.input(i).rank();
  }
  if (rank == 0) return c.invalid("cannot concatenate scalars (use tf.stack instead)");
  TROUPE_ASSIGN_OR_RETURN(auto axis, known_axis(c, n, rank));
  if (!axis) {
    c.set_output(0, rank < 0 ? PartialShape::unknown() : PartialShape::unknown_of_rank(rank));
    return Status::OK();
  }
  std::vector<int64_t> dims(rank, -1);
  int64_t along = 0;
  for (int i = 0; i < n; ++i) {
    if (!c.input(i).rank_known()) {
      along = -1;
      continue;
    }
    for (int d = 0; d < rank; ++d) {
      const int64_t v = c.input(i).dim(d);
      if (d == *axis) {
        along = (along < 0 || v < 0) ? -1 : along + v;
      } else if (v >= 0) {
        if (dims[d] >= 0 && dims[d] != v) {
          return c.invalid(
              "dimension {} of the inputs must match: input 0 has {}, input {} has {} (shapes "
              "{} and {})",
              d, dims[d], i, v, c.input(0).to_string(), c.input(i).to_string());
        }
        dims[d] = v;
      }
    }
  }
  dims[*axis] = along;
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

Status concat_offset_shape(InferenceContext& c) {
  for (int i = 1; i < c.num_inputs(); ++i)
    c.set_output(i - 1, c.input(i));
  return Status::OK();
}

// Split: `num_split` equal parts of `value` along `axis` (input 0).
Status split_shape(InferenceContext& c) {
  const PartialShape& value = c.input(1);
  const int64_t num = c.attr<int64_t>("num_split");
  TROUPE_ASSIGN_OR_RETURN(auto axis, known_axis(c, 0, value.rank()));
  PartialShape out =
      value.rank_known() ? PartialShape::unknown_of_rank(value.rank()) : PartialShape::unknown();
  if (axis) {
    std::vector<int64_t> dims = value.dims();
    if (dims[*axis] >= 0) {
      if (dims[*axis] % num != 0) {
        return c.invalid(
            "number of ways to split should evenly divide the split dimension, but "
            "got split_dim {} (size = {}) and num_split {}",
            *axis, dims[*axis], num);
      }
      dims[*axis] /= num;
    }
    out = PartialShape(dims);
  }
  for (int i = 0; i < c.num_outputs(); ++i)
    c.set_output(i, out);
  return Status::OK();
}

// SplitV: parts of the sizes in size_splits (one may be -1: the rest).
Status split_v_shape(InferenceContext& c) {
  const PartialShape& value = c.input(0);
  const int64_t num = c.attr<int64_t>("num_split");
  TROUPE_ASSIGN_OR_RETURN(auto axis, known_axis(c, 2, value.rank()));
  auto sizes = known_ints(c, 1);
  if (sizes && static_cast<int64_t>(sizes->size()) != num) {
    return c.invalid("size_splits has {} entries but num_split is {}", sizes->size(), num);
  }
  for (int i = 0; i < c.num_outputs(); ++i) {
    if (!axis || !sizes) {
      c.set_output(i, value.rank_known() ? PartialShape::unknown_of_rank(value.rank())
                                         : PartialShape::unknown());
      continue;
    }
    std::vector<int64_t> dims = value.dims();
    dims[*axis] = (*sizes)[i];
    c.set_output(i, PartialShape(dims));
  }
  if (axis && sizes && value.dim(static_cast<int>(*axis)) >= 0) {
    int64_t known = 0, unknown = 0;
    for (int64_t s : *sizes) {
      if (s == -1) {
        ++unknown;
      } else if (s < 0) {
        return c.invalid("size_splits may hold sizes >= 0 and one -1, got {}", s);
      } else {
        known += s;
      }
    }
    const int64_t total = value.dim(static_cast<int>(*axis));
    if (unknown > 1 || (unknown == 0 && known != total) || known > total) {
      return c.invalid(
          "size_splits [{}] must add up to the size of dimension {} ({}), with at most one -1",
          fmt::join(*sizes, ","), *axis, total);
    }
    for (int i = 0; i < c.num_outputs(); ++i) {
      if ((*sizes)[i] != -1) continue;
      std::vector<int64_t> dims = value.dims();
      dims[*axis] = total - known;
      c.set_output(i, PartialShape(dims));
    }
  }
  return Status::OK();
}

Status unpack_shape(InferenceContext& c) {
  const PartialShape& value = c.input(0);
  const int64_t num = c.attr<int64_t>("num");
  int64_t axis = c.attr<int64_t>("axis");
  if (!value.rank_known()) return shapes::unknown(c);
  const int64_t rank = value.rank();
  if (axis < -rank || axis >= rank) {
    return c.invalid("axis = {} not in [{}, {})", axis, -rank, rank);
  }
  if (axis < 0) axis += rank;
  if (value.dim(static_cast<int>(axis)) >= 0 && value.dim(static_cast<int>(axis)) != num) {
    return c.invalid("cannot unpack dimension {} of size {} into {} tensors", axis,
                     value.dim(static_cast<int>(axis)), num);
  }
  std::vector<int64_t> dims = value.dims();
  dims.erase(dims.begin() + axis);
  for (int i = 0; i < c.num_outputs(); ++i)
    c.set_output(i, PartialShape(dims));
  return Status::OK();
}

// begin and size: vectors as long as the input's rank; size -1 takes the rest.
Status slice_shape(InferenceContext& c) {
  const PartialShape& input = c.input(0);
  for (int i : {1, 2}) {
    if (c.input(i).rank_known() && c.input(i).rank() != 1) {
      return c.invalid("{} must be a vector, got shape {}", i == 1 ? "begin" : "size",
                       c.input(i).to_string());
    }
  }
  auto begin = known_ints(c, 1);
  auto size = known_ints(c, 2);
  int rank = input.rank();
  if (rank < 0 && size) rank = static_cast<int>(size->size());
  if (rank < 0 && begin) rank = static_cast<int>(begin->size());
  if (rank < 0) return shapes::unknown(c);
  for (const auto* v : {&begin, &size}) {
    if (*v && static_cast<int>((*v)->size()) != rank) {
      return c.invalid("begin and size must have {} entries (the input's rank), got {}", rank,
                       (*v)->size());
    }
  }
  std::vector<int64_t> dims(rank, -1);
  for (int d = 0; d < rank; ++d) {
    const int64_t dim = input.rank_known() ? input.dim(d) : -1;
    const int64_t b = begin ? (*begin)[d] : -1;
    if (begin && b < 0) return c.invalid("begin[{}] = {} must be >= 0", d, b);
    if (!size) continue;
    const int64_t s = (*size)[d];
    if (s < -1) return c.invalid("size[{}] = {} must be >= -1", d, s);
    if (s == -1) {
      dims[d] = (begin && dim >= 0) ? dim - b : -1;
    } else {
      dims[d] = s;
    }
    if (begin && dim >= 0 && (b > dim || (s >= 0 && b + s > dim))) {
      return c.invalid("slice [{}, {}) of dimension {} is out of its size {}", b,
                       s == -1 ? dim : b + s, d, dim);
    }
  }
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

StridedSliceMasks masks_of(const InferenceContext& c) {
  return {c.attr<int64_t>("begin_mask"), c.attr<int64_t>("end_mask"),
          c.attr<int64_t>("ellipsis_mask"), c.attr<int64_t>("new_axis_mask"),
          c.attr<int64_t>("shrink_axis_mask")};
}

// The output shape of a strided slice of `input` whose begin/end/strides are inputs first..+2.
StatusOr<PartialShape> strided_slice_output(const InferenceContext& c, const PartialShape& input,
                                            int first) {
  auto begin = known_ints(c, first);
  auto end = known_ints(c, first + 1);
  auto strides = known_ints(c, first + 2);
  if (!input.rank_known() || !begin || !end || !strides) return PartialShape::unknown();
  auto spec = make_strided_slice_spec(input.dims(), *begin, *end, *strides, masks_of(c));
  if (!spec.ok()) return c.invalid("{}", spec.status().message());
  return PartialShape(spec->output_dims);
}

Status strided_slice_shape(InferenceContext& c) {
  TROUPE_ASSIGN_OR_RETURN(PartialShape out, strided_slice_output(c, c.input(0), 1));
  c.set_output(0, out);
  return Status::OK();
}

Status strided_slice_grad_shape(InferenceContext& c) {
  auto shape = known_ints(c, 0);
  if (!shape) {
    c.set_output(0, c.input(0).rank_known() && c.input(0).dim(0) >= 0
                        ? PartialShape::unknown_of_rank(static_cast<int>(c.input(0).dim(0)))
                        : PartialShape::unknown());
    return Status::OK();
  }
  TROUPE_ASSIGN_OR_RETURN(PartialShape sliced,
                          strided_slice_output(c, PartialShape(*shape), /*first=*/1));
  if (!sliced.compatible_with(c.input(4))) {
    return c.invalid("dy has shape {} but the slice has shape {}", c.input(4).to_string(),
                     sliced.to_string());
  }
  c.set_output(0, PartialShape(*shape));
  return Status::OK();
}

Status check_mirror_mode(const InferenceContext& c) {
  const auto& mode = c.attr<std::string>("mode");
  if (mode != "REFLECT" && mode != "SYMMETRIC") {
    return c.invalid("mode \"{}\": expected REFLECT or SYMMETRIC", mode);
  }
  return Status::OK();
}

Status pad_shape(InferenceContext& c) {
  const PartialShape& input = c.input(0);
  const PartialShape& paddings = c.input(1);
  if (paddings.rank_known() &&
      (paddings.rank() != 2 || (paddings.dim(1) >= 0 && paddings.dim(1) != 2))) {
    return c.invalid("paddings must be a matrix with 2 columns, got shape {}",
                     paddings.to_string());
  }
  if (input.rank_known() && paddings.rank_known() && paddings.dim(0) >= 0 &&
      paddings.dim(0) != input.rank()) {
    return c.invalid("the input has rank {} but paddings has {} rows", input.rank(),
                     paddings.dim(0));
  }
  if (c.num_inputs() > 2 && c.input(2).rank_known() && c.input(2).rank() != 0) {
    return c.invalid("constant_values must be a scalar, got shape {}", c.input(2).to_string());
  }
  auto pads = known_ints(c, 1);
  int rank = input.rank_known() ? input.rank() : (pads ? static_cast<int>(pads->size() / 2) : -1);
  if (rank < 0) return shapes::unknown(c);
  std::vector<int64_t> dims(rank, -1);
  for (int d = 0; d < rank; ++d) {
    if (!pads) continue;
    const int64_t before = (*pads)[2 * d], after = (*pads)[2 * d + 1];
    if (before < 0 || after < 0) {
      return c.invalid("paddings must be non-negative, got ({}, {}) for dimension {}", before,
                       after, d);
    }
    const int64_t dim = input.rank_known() ? input.dim(d) : -1;
    dims[d] = dim < 0 ? -1 : dim + before + after;
  }
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

// perm must be a permutation of [0, rank).
Status transpose_shape(InferenceContext& c) {
  const PartialShape& x = c.input(0);
  if (c.input(1).rank_known() && c.input(1).rank() != 1) {
    return c.invalid("perm must be a vector, got shape {}", c.input(1).to_string());
  }
  auto perm = known_ints(c, 1);
  if (!perm) {
    c.set_output(0, x.rank_known() ? PartialShape::unknown_of_rank(x.rank()) : x);
    return Status::OK();
  }
  const int rank = static_cast<int>(perm->size());
  if (x.rank_known() && x.rank() != rank) {
    return c.invalid("transpose expects a vector of size {} (the input's rank), got [{}]", x.rank(),
                     fmt::join(*perm, ","));
  }
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> dims(rank, -1);
  for (int i = 0; i < rank; ++i) {
    const int64_t p = (*perm)[i];
    if (p < 0 || p >= rank || seen[p]) {
      return c.invalid("[{}] is not a permutation of 0..{}", fmt::join(*perm, ","), rank - 1);
    }
    seen[p] = true;
    dims[i] = x.rank_known() ? x.dim(static_cast<int>(p)) : -1;
  }
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

Status vector_unchanged_shape(InferenceContext& c) {
  if (c.input(0).rank_known() && c.input(0).rank() != 1) {
    return c.invalid("x must be a vector, got shape {}", c.input(0).to_string());
  }
  c.set_output(0, c.input(0));
  return Status::OK();
}

Status reverse_shape(InferenceContext& c) {
  const PartialShape& x = c.input(0);
  if (c.input(1).rank_known() && c.input(1).rank() != 1) {
    return c.invalid("axis must be a vector, got shape {}", c.input(1).to_string());
  }
  if (auto axes = known_ints(c, 1); axes && x.rank_known()) {
    std::vector<bool> seen(x.rank(), false);
    for (int64_t a : *axes) {
      if (a < -x.rank() || a >= x.rank()) {
        return c.invalid("axis {} is out of range [{}, {})", a, -x.rank(), x.rank());
      }
      const int64_t d = a < 0 ? a + x.rank() : a;
      if (seen[d]) return c.invalid("axis {} is named more than once", d);
      seen[d] = true;
    }
  }
  c.set_output(0, x);
  return Status::OK();
}

Status tile_shape(InferenceContext& c) {
  const PartialShape& input = c.input(0);
  if (c.input(1).rank_known() && c.input(1).rank() != 1) {
    return c.invalid("multiples must be a vector, got shape {}", c.input(1).to_string());
  }
  auto multiples = known_ints(c, 1);
  if (!multiples) {
    c.set_output(0, input.rank_known() ? PartialShape::unknown_of_rank(input.rank()) : input);
    return Status::OK();
  }
  const int rank = static_cast<int>(multiples->size());
  if (input.rank_known() && input.rank() != rank) {
    return c.invalid("multiples has {} entries but the input has rank {}", rank, input.rank());
  }
  std::vector<int64_t> dims(rank, -1);
  for (int d = 0; d < rank; ++d) {
    const int64_t m = (*multiples)[d];
    if (m < 0) return c.invalid("multiples[{}] = {} must be >= 0", d, m);
    const int64_t dim = input.rank_known() ? input.dim(d) : -1;
    dims[d] = dim < 0 ? -1 : dim * m;
  }
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

Status expand_dims_shape(InferenceContext& c) {
  const PartialShape& input = c.input(0);
  TROUPE_ASSIGN_OR_RETURN(auto axis, known_axis(c, 1, input.rank(), /*extra=*/1));
  if (!input.rank_known()) return shapes::unknown(c);
  if (!axis) {
    c.set_output(0, PartialShape::unknown_of_rank(input.rank() + 1));
    return Status::OK();
  }
  std::vector<int64_t> dims = input.dims();
  dims.insert(dims.begin() + *axis, 1);
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

Status squeeze_shape(InferenceContext& c) {
  const PartialShape& input = c.input(0);
  const auto& axes = c.attr<std::vector<int64_t>>("squeeze_dims");
  if (!input.rank_known()) return shapes::unknown(c);
  const int rank = input.rank();
  std::vector<bool> squeeze(rank, false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return c.invalid("tried to squeeze dim index {} for a tensor of rank {}", a, rank);
    }
    const int64_t d = a < 0 ? a + rank : a;
    if (input.dim(static_cast<int>(d)) >= 0 && input.dim(static_cast<int>(d)) != 1) {
      return c.invalid("can not squeeze dim[{}], expected a dimension of 1, got {}", d,
                       input.dim(static_cast<int>(d)));
    }
    squeeze[d] = true;
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d) {
    const int64_t v = input.dim(d);
    if (axes.empty()) {
      if (v == -1) {  // it may or may not be 1: the rank is not known
        c.set_output(0, PartialShape::unknown());
        return Status::OK();
      }
      if (v == 1) continue;
    } else if (squeeze[d]) {
      continue;
    }
    dims.push_back(v);
  }
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

Status one_hot_shape(InferenceContext& c) {
  const PartialShape& indices = c.input(0);
  int64_t axis = c.attr<int64_t>("axis");
  for (int i : {1, 2, 3}) {
    if (c.input(i).rank_known() && c.input(i).rank() != 0) {
      return c.invalid("{} must be a scalar, got shape {}",
                       i == 1 ? "depth" : (i == 2 ? "on_value" : "off_value"),
                       c.input(i).to_string());
    }
  }
  if (axis < -1) return c.invalid("axis must be -1 or a dimension, got {}", axis);
  if (!indices.rank_known()) return shapes::unknown(c);
  if (axis > indices.rank()) {
    return c.invalid("axis {} is out of range for indices of rank {}", axis, indices.rank());
  }
  int64_t depth = -1;
  if (auto d = known_ints(c, 1)) {
    depth = (*d)[0];
    if (depth < 0) return c.invalid("depth must be non-negative, got {}", depth);
  }
  std::vector<int64_t> dims = indices.dims();
  dims.insert(axis == -1 ? dims.end() : dims.begin() + axis, depth);
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

Status range_shape(InferenceContext& c) {
  for (int i = 0; i < 3; ++i) {
    if (c.input(i).rank_known() && c.input(i).rank() != 0) {
      return c.invalid("{} must be a scalar, got shape {}",
                       i == 0 ? "start" : (i == 1 ? "limit" : "delta"), c.input(i).to_string());
    }
  }
  const Tensor* start = c.input_value(0);
  const Tensor* limit = c.input_value(1);
  const Tensor* delta = c.input_value(2);
  if (start == nullptr || limit == nullptr || delta == nullptr) {
    c.set_output(0, PartialShape({-1}));
    return Status::OK();
  }
  auto as_double = [](const Tensor& t) {
    double v = 0;
    TROUPE_SWITCH_NUMERIC(t.dtype(), T, v = static_cast<double>(t.scalar<T>()));
    return v;
  };
  const double s = as_double(*start), l = as_double(*limit), d = as_double(*delta);
  if (d == 0) return c.invalid("requires delta != 0");
  if ((d > 0 && s > l) || (d < 0 && s < l)) {
    return c.invalid("requires start <= limit when delta > 0 (or >= when delta < 0): {}/{}", s, l);
  }
  const bool integral =
      c.input_dtype(0) == DataType::kInt32 || c.input_dtype(0) == DataType::kInt64;
  const int64_t size = integral
                           ? static_cast<int64_t>((std::abs(l - s) + std::abs(d) - 1) / std::abs(d))
                           : static_cast<int64_t>(std::ceil(std::abs((l - s) / d)));
  c.set_output(0, PartialShape({size}));
  return Status::OK();
}

std::vector<Output> outputs_of(const Operation& op, int64_t n) {
  std::vector<Output> outs;
  if (!op.valid()) return outs;
  for (int64_t i = 0; i < n; ++i)
    outs.emplace_back(op, static_cast<int>(i));
  return outs;
}

NodeBuilder& with_masks(NodeBuilder& b, const StridedSliceMasks& m) {
  return b.attr("begin_mask", m.begin_mask)
      .attr("end_mask", m.end_mask)
      .attr("ellipsis_mask", m.ellipsis_mask)
      .attr("new_axis_mask", m.new_axis_mask)
      .attr("shrink_axis_mask", m.shrink_axis_mask);
}

// StridedSlice's and StridedSliceGrad's five mask attributes, added to `b`.
OpDefBuilder& add_mask_attrs(OpDefBuilder& b) {
  return b.attr("begin_mask: int = 0")
      .attr("end_mask: int = 0")
      .attr("ellipsis_mask: int = 0")
      .attr("new_axis_mask: int = 0")
      .attr("shrink_axis_mask: int = 0");
}

// The input's shape; seq_dim and batch_dim distinct dimensions of it, seq_lengths a vector as
// long as the batch.
Status reverse_sequence_shape(InferenceContext& c) {
  const PartialShape& input = c.input(0);
  const int64_t seq_dim = c.attr<int64_t>("seq_dim");
  const int64_t batch_dim = c.attr<int64_t>("batch_dim");
  if (c.input(1).rank_known() && c.input(1).rank() != 1) {
    return c.invalid("seq_lengths must be 1-dim, not {}-dim", c.input(1).rank());
  }
  if (input.rank_known()) {
    const int64_t rank = input.rank();
    if (seq_dim < 0 || seq_dim >= rank || batch_dim < 0 || batch_dim >= rank) {
      return c.invalid("seq_dim ({}) and batch_dim ({}) must be in [0, {}) of the input's rank",
                       seq_dim, batch_dim, rank);
    }
    if (c.input(1).rank_known() && c.input(1).dim(0) >= 0 && input.dim(batch_dim) >= 0 &&
        c.input(1).dim(0) != input.dim(batch_dim)) {
      return c.invalid("len(seq_lens) != input.dims({}), ({} vs. {})", batch_dim, c.input(1).dim(0),
                       input.dim(batch_dim));
    }
  }
  if (seq_dim == batch_dim) return c.invalid("seq_dim == batch_dim == {}", seq_dim);
  c.set_output(0, input);
  return Status::OK();
}

}  // namespace

void register_array_manipulation_ops(OpRegistry& r) {
  must_register(r, OpDefBuilder("ConcatV2")
                       .input("values: N * T")
                       .input("axis: Tidx")
                       .output("output: T")
                       .attr("N: int >= 2")
                       .attr("T: type")
                       .attr(kIndex)
                       .shape_fn(concat_shape));
  must_register(r, OpDefBuilder("ConcatOffset")
                       .input("concat_dim: int32")
                       .input("shape: N * int32")
                       .output("offset: N * int32")
                       .attr("N: int >= 2")
                       .shape_fn(concat_offset_shape));
  must_register(r, OpDefBuilder("Split")
                       .input("split_dim: int32")
                       .input("value: T")
                       .output("output: num_split * T")
                       .attr("num_split: int >= 1")
                       .attr("T: type")
                       .shape_fn(split_shape));
  must_register(r, OpDefBuilder("SplitV")
                       .input("value: T")
                       .input("size_splits: Tlen")
                       .input("split_dim: int32")
                       .output("output: num_split * T")
                       .attr("num_split: int >= 1")
                       .attr("T: type")
                       .attr("Tlen: {int32, int64} = int64")
                       .shape_fn(split_v_shape));
  must_register(r, OpDefBuilder("Unpack")
                       .input("value: T")
                       .output("output: num * T")
                       .attr("num: int >= 0")
                       .attr("T: type")
                       .attr("axis: int = 0")
                       .shape_fn(unpack_shape));
  must_register(r, OpDefBuilder("Slice")
                       .input("input: T")
                       .input("begin: Index")
                       .input("size: Index")
                       .output("output: T")
                       .attr("T: type")
                       .attr("Index: {int32, int64}")
                       .shape_fn(slice_shape));
  OpDefBuilder strided_slice("StridedSlice");
  strided_slice.input("input: T")
      .input("begin: Index")
      .input("end: Index")
      .input("strides: Index")
      .output("output: T")
      .attr("T: type")
      .attr("Index: {int32, int64}")
      .shape_fn(strided_slice_shape);
  must_register(r, add_mask_attrs(strided_slice));
  OpDefBuilder strided_slice_grad("StridedSliceGrad");
  strided_slice_grad.input("shape: Index")
      .input("begin: Index")
      .input("end: Index")
      .input("strides: Index")
      .input("dy: T")
      .output("output: T")
      .attr("T: type")
      .attr("Index: {int32, int64}")
      .shape_fn(strided_slice_grad_shape);
  must_register(r, add_mask_attrs(strided_slice_grad));
  // A variable's strided slice assigned in place (`var[1:3].assign(x)`); value must have the
  // slice's shape (no broadcasting, as TensorFlow's).
  OpDefBuilder strided_slice_assign("StridedSliceAssign");
  strided_slice_assign.input("ref: Ref(T)")
      .input("begin: Index")
      .input("end: Index")
      .input("strides: Index")
      .input("value: T")
      .output("output_ref: Ref(T)")
      .attr("T: type")
      .attr("Index: {int32, int64}")
      .shape_fn(shapes::unchanged);
  must_register(r, add_mask_attrs(strided_slice_assign));
  must_register(r, OpDefBuilder("Pad")
                       .input("input: T")
                       .input("paddings: Tpaddings")
                       .output("output: T")
                       .attr("T: type")
                       .attr("Tpaddings: {int32, int64} = int32")
                       .shape_fn(pad_shape));
  // Padding that mirrors the input at each border: REFLECT leaves the border element out of
  // the mirror (paddings below the dimension), SYMMETRIC repeats it (up to the dimension).
  must_register(r, OpDefBuilder("MirrorPad")
                       .input("input: T")
                       .input("paddings: Tpaddings")
                       .output("output: T")
                       .attr("T: type")
                       .attr("Tpaddings: {int32, int64} = int32")
                       .attr("mode: string")
                       .shape_fn([](InferenceContext& c) {
                         TROUPE_RETURN_IF_ERROR(check_mirror_mode(c));
                         return pad_shape(c);
                       }));
  // MirrorPad's gradient: each element of `input` (the padded gradient) added to the element
  // of the unpadded shape it was mirrored from.
  must_register(r, OpDefBuilder("MirrorPadGrad")
                       .input("input: T")
                       .input("paddings: Tpaddings")
                       .output("output: T")
                       .attr("T: {float32, float64, int32, int64}")
                       .attr("Tpaddings: {int32, int64} = int32")
                       .attr("mode: string")
                       .shape_fn([](InferenceContext& c) {
                         TROUPE_RETURN_IF_ERROR(check_mirror_mode(c));
                         return shapes::unknown(c);
                       }));
  must_register(r, OpDefBuilder("PadV2")
                       .input("input: T")
                       .input("paddings: Tpaddings")
                       .input("constant_values: T")
                       .output("output: T")
                       .attr("T: type")
                       .attr("Tpaddings: {int32, int64} = int32")
                       .shape_fn(pad_shape));
  must_register(r, OpDefBuilder("Transpose")
                       .input("x: T")
                       .input("perm: Tperm")
                       .output("y: T")
                       .attr("T: type")
                       .attr("Tperm: {int32, int64} = int32")
                       .shape_fn(transpose_shape));
  must_register(r, OpDefBuilder("InvertPermutation")
                       .input("x: T")
                       .output("y: T")
                       .attr("T: {int32, int64} = int32")
                       .shape_fn(vector_unchanged_shape));
  must_register(r, OpDefBuilder("ReverseV2")
                       .input("tensor: T")
                       .input("axis: Tidx")
                       .output("output: T")
                       .attr(kIndex)
                       .attr("T: type")
                       .shape_fn(reverse_shape));
  // The first seq_lengths[b] elements along seq_dim of each batch entry b reversed, the rest
  // kept (TensorFlow's ReverseSequence: the reversal of each sequence in a padded batch).
  must_register(r, OpDefBuilder("ReverseSequence")
                       .input("input: T")
                       .input("seq_lengths: Tlen")
                       .output("output: T")
                       .attr("seq_dim: int")
                       .attr("batch_dim: int = 0")
                       .attr("T: type")
                       .attr("Tlen: {int32, int64} = int64")
                       .shape_fn(reverse_sequence_shape));
  must_register(r, OpDefBuilder("Tile")
                       .input("input: T")
                       .input("multiples: Tmultiples")
                       .output("output: T")
                       .attr("T: type")
                       .attr("Tmultiples: {int32, int64} = int32")
                       .shape_fn(tile_shape));
  must_register(r, OpDefBuilder("ExpandDims")
                       .input("input: T")
                       .input("dim: Tdim")
                       .output("output: T")
                       .attr("T: type")
                       .attr("Tdim: {int32, int64} = int32")
                       .shape_fn(expand_dims_shape));
  must_register(r, OpDefBuilder("Squeeze")
                       .input("input: T")
                       .output("output: T")
                       .attr("T: type")
                       .attr("squeeze_dims: list(int) = []")
                       .shape_fn(squeeze_shape));
  must_register(r, OpDefBuilder("OneHot")
                       .input("indices: TI")
                       .input("depth: int32")
                       .input("on_value: T")
                       .input("off_value: T")
                       .output("output: T")
                       .attr("axis: int = -1")
                       .attr("T: type")
                       .attr("TI: {int32, int64} = int64")
                       .shape_fn(one_hot_shape));
  must_register(r, OpDefBuilder("Range")
                       .input("start: Tidx")
                       .input("limit: Tidx")
                       .input("delta: Tidx")
                       .output("output: Tidx")
                       .attr("Tidx: {float32, float64, int32, int64} = int32")
                       .shape_fn(range_shape));
  must_register(r, OpDefBuilder("Rank")
                       .input("input: T")
                       .output("output: int32")
                       .attr("T: type")
                       .shape_fn(shapes::scalar));
}

namespace ops {

Output ConcatV2(const Scope& s, const std::vector<Input>& values, const Input& axis) {
  return NodeBuilder(s, "ConcatV2").input_list(values).input(axis).finalize();
}

std::vector<Output> ConcatOffset(const Scope& s, const Input& concat_dim,
                                 const std::vector<Input>& shapes) {
  return outputs_of(NodeBuilder(s, "ConcatOffset").input(concat_dim).input_list(shapes).finalize(),
                    static_cast<int64_t>(shapes.size()));
}

std::vector<Output> Split(const Scope& s, const Input& axis, const Input& value,
                          int64_t num_split) {
  return outputs_of(
      NodeBuilder(s, "Split").input(axis).input(value).attr("num_split", num_split).finalize(),
      num_split);
}

std::vector<Output> SplitV(const Scope& s, const Input& value, const Input& size_splits,
                           const Input& axis, int64_t num_split) {
  return outputs_of(NodeBuilder(s, "SplitV")
                        .input(value)
                        .input(size_splits)
                        .input(axis)
                        .attr("num_split", num_split)
                        .finalize(),
                    num_split);
}

std::vector<Output> Unpack(const Scope& s, const Input& value, int64_t num, int64_t axis) {
  return outputs_of(
      NodeBuilder(s, "Unpack").input(value).attr("num", num).attr("axis", axis).finalize(), num);
}

Output Slice(const Scope& s, const Input& input, const Input& begin, const Input& size) {
  return NodeBuilder(s, "Slice").input(input).input(begin).input(size).finalize();
}

Output StridedSlice(const Scope& s, const Input& input, const Input& begin, const Input& end,
                    const Input& strides, const StridedSliceMasks& masks) {
  NodeBuilder b(s, "StridedSlice");
  b.input(input).input(begin).input(end).input(strides);
  return with_masks(b, masks).finalize();
}

Output StridedSliceGrad(const Scope& s, const Input& shape, const Input& begin, const Input& end,
                        const Input& strides, const Input& dy, const StridedSliceMasks& masks) {
  NodeBuilder b(s, "StridedSliceGrad");
  b.input(shape).input(begin).input(end).input(strides).input(dy);
  return with_masks(b, masks).finalize();
}

Output Pad(const Scope& s, const Input& input, const Input& paddings) {
  return NodeBuilder(s, "Pad").input(input).input(paddings).finalize();
}

Output PadV2(const Scope& s, const Input& input, const Input& paddings,
             const Input& constant_values) {
  return NodeBuilder(s, "PadV2").input(input).input(paddings).input(constant_values).finalize();
}

Output Transpose(const Scope& s, const Input& x, const Input& perm) {
  return NodeBuilder(s, "Transpose").input(x).input(perm).finalize();
}

Output InvertPermutation(const Scope& s, const Input& x) {
  return NodeBuilder(s, "InvertPermutation").input(x).finalize();
}

Output ReverseSequence(const Scope& s, const Input& input, const Input& seq_lengths,
                       int64_t seq_dim, int64_t batch_dim) {
  return NodeBuilder(s, "ReverseSequence")
      .input(input)
      .input(seq_lengths)
      .attr("seq_dim", seq_dim)
      .attr("batch_dim", batch_dim)
      .finalize();
}

Output ReverseV2(const Scope& s, const Input& tensor, const Input& axis) {
  return NodeBuilder(s, "ReverseV2").input(tensor).input(axis).finalize();
}

Output Tile(const Scope& s, const Input& input, const Input& multiples) {
  return NodeBuilder(s, "Tile").input(input).input(multiples).finalize();
}

Output ExpandDims(const Scope& s, const Input& input, const Input& axis) {
  return NodeBuilder(s, "ExpandDims").input(input).input(axis).finalize();
}

Output Squeeze(const Scope& s, const Input& input, const std::vector<int64_t>& axis) {
  return NodeBuilder(s, "Squeeze").input(input).attr("squeeze_dims", axis).finalize();
}

Output OneHot(const Scope& s, const Input& indices, const Input& depth, const Input& on_value,
              const Input& off_value, int64_t axis) {
  return NodeBuilder(s, "OneHot")
      .input(indices)
      .input(depth)
      .input(on_value)
      .input(off_value)
      .attr("axis", axis)
      .finalize();
}

Output Range(const Scope& s, const Input& start, const Input& limit, const Input& delta) {
  return NodeBuilder(s, "Range").input(start).input(limit).input(delta).finalize();
}

Output Rank(const Scope& s, const Input& input) {
  return NodeBuilder(s, "Rank").input(input).finalize();
}

}  // namespace ops
}  // namespace troupe
