// Segment reductions: definitions, shape functions and builders (TensorFlow 1.x's
// core/ops/math_ops.cc Segment*, UnsortedSegment*, SparseSegment*).
#include "troupe/graph/ops/segment_ops.hpp"

#include <string>

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

Status unsorted_segment_shape(InferenceContext& c) {
  const PartialShape& data = c.input(0);
  const PartialShape& ids = c.input(1);
  if (c.input(2).rank_known() && c.input(2).rank() != 0) {
    return c.invalid("num_segments must be a scalar, got shape {}", c.input(2).to_string());
  }
  int64_t segments = -1;
  if (auto n = c.input_as_ints(2)) {
    segments = (*n)[0];
    if (segments < 0) return c.invalid("num_segments must be >= 0, got {}", segments);
  }
  if (!data.rank_known() || !ids.rank_known()) return shapes::unknown(c);
  if (ids.rank() > data.rank()) {
    return c.invalid("segment_ids (shape {}) must be a prefix of data's shape {}", ids.to_string(),
                     data.to_string());
  }
  for (int d = 0; d < ids.rank(); ++d) {
    if (ids.dim(d) >= 0 && data.dim(d) >= 0 && ids.dim(d) != data.dim(d)) {
      return c.invalid("segment_ids (shape {}) must be a prefix of data's shape {}",
                       ids.to_string(), data.to_string());
    }
  }
  std::vector<int64_t> dims = {segments};
  dims.insert(dims.end(), data.dims().begin() + ids.rank(), data.dims().end());
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

// [?] + data.shape[1:]; segment_ids a vector as long as data's first dimension.
Status segment_shape(InferenceContext& c) {
  const PartialShape& data = c.input(0);
  const PartialShape& ids = c.input(1);
  if (ids.rank_known() && ids.rank() != 1) {
    return c.invalid("segment_ids should be a vector, got shape {}", ids.to_string());
  }
  if (!data.rank_known()) return shapes::unknown(c);
  if (data.rank() < 1) return c.invalid("data must be at least rank 1, got a scalar");
  if (ids.rank_known() && ids.dim(0) >= 0 && data.dim(0) >= 0 && ids.dim(0) != data.dim(0)) {
    return c.invalid(
        "segment_ids should be the same size as dimension 0 of input: {} vs. data of shape {}",
        ids.dim(0), data.to_string());
  }
  std::vector<int64_t> dims = data.dims();
  dims[0] = -1;
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

Status check_vector(InferenceContext& c, int i, std::string_view what) {
  if (c.input(i).rank_known() && c.input(i).rank() != 1) {
    return c.invalid("{} should be a vector, got shape {}", what, c.input(i).to_string());
  }
  return Status::OK();
}

// [rows] + data.shape[1:], rows the constant num_segments (input 3) when there is one.
Status sparse_segment_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(check_vector(c, 1, "indices"));
  TROUPE_RETURN_IF_ERROR(check_vector(c, 2, "segment_ids"));
  if (!c.input(1).merge(c.input(2)).ok()) {
    return c.invalid("segment_ids and indices should have same size, got shapes {} and {}",
                     c.input(2).to_string(), c.input(1).to_string());
  }
  int64_t rows = -1;
  if (c.num_inputs() == 4) {
    if (c.input(3).rank_known() && c.input(3).rank() != 0) {
      return c.invalid("num_segments should be a scalar, got shape {}", c.input(3).to_string());
    }
    if (auto n = c.input_as_ints(3)) {
      rows = (*n)[0];
      if (rows < 0) return c.invalid("num_segments must be >= 0, got {}", rows);
    }
  }
  const PartialShape& data = c.input(0);
  if (!data.rank_known()) return shapes::unknown(c);
  if (data.rank() < 1) return c.invalid("data must be at least rank 1, got a scalar");
  std::vector<int64_t> dims = data.dims();
  dims[0] = rows;
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

Status sparse_segment_grad_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(check_vector(c, 1, "indices"));
  TROUPE_RETURN_IF_ERROR(check_vector(c, 2, "segment_ids"));
  const PartialShape& grad = c.input(0);
  if (!grad.rank_known()) return shapes::unknown(c);
  if (grad.rank() < 1) return c.invalid("grad must be at least rank 1, got a scalar");
  if (c.input(3).rank_known() && c.input(3).rank() != 0) {
    return c.invalid("output_dim0 should be a scalar, got shape {}", c.input(3).to_string());
  }
  std::vector<int64_t> dims = grad.dims();
  auto rows = c.input_as_ints(3);
  dims[0] = rows && rows->size() == 1 ? (*rows)[0] : -1;
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

}  // namespace

void register_segment_ops(OpRegistry& r) {
  for (const std::string reduction : {"Sum", "Mean", "Prod", "Min", "Max"}) {
    must_register(r, OpDefBuilder("Segment" + reduction)
                         .input("data: T")
                         .input("segment_ids: Tindices")
                         .output("output: T")
                         .attr("T: {float32, float64, int32, int64}")
                         .attr("Tindices: {int32, int64}")
                         .shape_fn(segment_shape));
    if (reduction == "Mean") continue;
    must_register(r, OpDefBuilder("UnsortedSegment" + reduction)
                         .input("data: T")
                         .input("segment_ids: Tindices")
                         .input("num_segments: Tnumsegments")
                         .output("output: T")
                         .attr("T: {float32, float64, int32, int64}")
                         .attr("Tindices: {int32, int64}")
                         .attr("Tnumsegments: {int32, int64} = int32")
                         .shape_fn(unsorted_segment_shape));
  }
  for (const std::string reduction : {"Sum", "Mean", "SqrtN"}) {
    const char* types =
        reduction == "Sum" ? "T: {float32, float64, int32, int64}" : "T: {float32, float64}";
    must_register(r, OpDefBuilder("SparseSegment" + reduction)
                         .input("data: T")
                         .input("indices: Tidx")
                         .input("segment_ids: int32")
                         .output("output: T")
                         .attr(types)
                         .attr("Tidx: {int32, int64} = int32")
                         .shape_fn(sparse_segment_shape));
    must_register(r, OpDefBuilder("SparseSegment" + reduction + "WithNumSegments")
                         .input("data: T")
                         .input("indices: Tidx")
                         .input("segment_ids: int32")
                         .input("num_segments: Tnumsegments")
                         .output("output: T")
                         .attr(types)
                         .attr("Tidx: {int32, int64} = int32")
                         .attr("Tnumsegments: {int32, int64} = int32")
                         .shape_fn(sparse_segment_shape));
    if (reduction == "Sum") continue;
    must_register(r, OpDefBuilder("SparseSegment" + reduction + "Grad")
                         .input("grad: T")
                         .input("indices: Tidx")
                         .input("segment_ids: int32")
                         .input("output_dim0: int32")
                         .output("output: T")
                         .attr("T: {float32, float64}")
                         .attr("Tidx: {int32, int64} = int32")
                         .shape_fn(sparse_segment_grad_shape));
  }
}

namespace ops {

Output SegmentReduction(const Scope& s, std::string_view reduction, const Input& data,
                        const Input& segment_ids) {
  return NodeBuilder(s, "Segment" + std::string(reduction))
      .input(data)
      .input(segment_ids)
      .finalize();
}

Output UnsortedSegmentReduction(const Scope& s, std::string_view reduction, const Input& data,
                                const Input& segment_ids, const Input& num_segments) {
  return NodeBuilder(s, "UnsortedSegment" + std::string(reduction))
      .input(data)
      .input(segment_ids)
      .input(num_segments)
      .finalize();
}

Output UnsortedSegmentSum(const Scope& s, const Input& data, const Input& segment_ids,
                          const Input& num_segments) {
  return UnsortedSegmentReduction(s, "Sum", data, segment_ids, num_segments);
}

Output SparseSegmentReduction(const Scope& s, std::string_view reduction, const Input& data,
                              const Input& indices, const Input& segment_ids) {
  return NodeBuilder(s, "SparseSegment" + std::string(reduction))
      .input(data)
      .input(indices)
      .input(segment_ids)
      .finalize();
}

Output SparseSegmentReductionWithNumSegments(const Scope& s, std::string_view reduction,
                                             const Input& data, const Input& indices,
                                             const Input& segment_ids, const Input& num_segments) {
  return NodeBuilder(s, "SparseSegment" + std::string(reduction) + "WithNumSegments")
      .input(data)
      .input(indices)
      .input(segment_ids)
      .input(num_segments)
      .finalize();
}

Output SparseSegmentSum(const Scope& s, const Input& data, const Input& indices,
                        const Input& segment_ids) {
  return SparseSegmentReduction(s, "Sum", data, indices, segment_ids);
}

Output SparseSegmentMean(const Scope& s, const Input& data, const Input& indices,
                         const Input& segment_ids) {
  return SparseSegmentReduction(s, "Mean", data, indices, segment_ids);
}

Output SparseSegmentSqrtN(const Scope& s, const Input& data, const Input& indices,
                          const Input& segment_ids) {
  return SparseSegmentReduction(s, "SqrtN", data, indices, segment_ids);
}

Output SparseSegmentReductionGrad(const Scope& s, std::string_view reduction, const Input& grad,
                                  const Input& indices, const Input& segment_ids,
                                  const Input& output_dim0) {
  return NodeBuilder(s, "SparseSegment" + std::string(reduction) + "Grad")
      .input(grad)
      .input(indices)
      .input(segment_ids)
      .input(output_dim0)
      .finalize();
}

}  // namespace ops
}  // namespace troupe
