// GatherTree's definition and shape function (beam_search_ops.hpp).
#include "troupe/graph/ops/beam_search_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

// step_ids and parent_ids of rank 3 and one shape, whose dimension 1 is max_sequence_lengths'
// length; end_token a scalar. The output has the merged shape.
Status gather_tree_shape(InferenceContext& c) {
  // TensorFlow's messages (its shape function's WithRank and Merge).
  const int ranks[] = {3, 3, 1, 0};
  for (int i = 0; i < 4; ++i) {
    if (c.input(i).rank_known() && c.input(i).rank() != ranks[i]) {
      return c.invalid("Shape must be rank {} but is rank {} (input {}, shape {})", ranks[i],
                       c.input(i).rank(), i, c.input(i).to_string());
    }
  }
  auto merged = c.input(0).merge(c.input(1));
  if (!merged.ok()) {
    int d = 0;
    while (d < 2 && (c.input(0).dim(d) < 0 || c.input(1).dim(d) < 0 ||
                     c.input(0).dim(d) == c.input(1).dim(d))) {
      ++d;
    }
    return c.invalid(
        "Dimension {} in both shapes must be equal, but are {} and {}. Shapes are {} "
        "and {}",
        d, c.input(0).dim(d), c.input(1).dim(d), c.input(0).to_string(), c.input(1).to_string());
  }
  PartialShape beams = merged->rank_known() ? *merged : PartialShape::unknown_of_rank(3);
  const PartialShape& lengths = c.input(2);
  if (lengths.rank_known()) {
    auto batch = PartialShape({beams.dim(1)}).merge(PartialShape({lengths.dim(0)}));
    if (!batch.ok()) {
      return c.invalid(
          "Dimensions must be equal, but are {} and {} (step_ids.shape[1] and "
          "max_sequence_lengths.shape[0], the batch size). Shapes are {} and {}",
          beams.dim(1), lengths.dim(0), beams.to_string(), lengths.to_string());
    }
    beams = PartialShape({beams.dim(0), batch->dim(0), beams.dim(2)});
  }
  c.set_output(0, beams);
  return Status::OK();
}

}  // namespace

void register_beam_search_ops(OpRegistry& r) {
  must_register(r, OpDefBuilder("GatherTree")
                       .input("step_ids: T")
                       .input("parent_ids: T")
                       .input("max_sequence_lengths: int32")
                       .input("end_token: T")
                       .output("beams: T")
                       .attr("T: {int32}")
                       .shape_fn(gather_tree_shape));
}

namespace ops {

Output GatherTree(const Scope& s, const Input& step_ids, const Input& parent_ids,
                  const Input& max_sequence_lengths, const Input& end_token) {
  return NodeBuilder(s, "GatherTree")
      .input(step_ids)
      .input(parent_ids)
      .input(max_sequence_lengths)
      .input(end_token)
      .finalize();
}

}  // namespace ops
}  // namespace troupe
