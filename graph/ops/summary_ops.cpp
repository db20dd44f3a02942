// Summary ops: definitions, shape functions and builders.
#include "troupe/graph/ops/summary_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

// Input `i` must be a scalar (`what` names it).
Status scalar_input(InferenceContext& c, int i, const char* what) {
  if (c.input(i).rank_known() && c.input(i).rank() != 0) {
    return c.invalid("{} must be a scalar, got shape {}", what, c.input(i).to_string());
  }
  return Status::OK();
}

Status summary_of_tag(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(scalar_input(c, 0, "the tag"));
  c.set_output(0, PartialShape::scalar());
  return Status::OK();
}

Status scalar_summary_shape(InferenceContext& c) {
  if (c.input(0).rank_known() && c.input(1).rank_known() && !c.input(0).merge(c.input(1)).ok()) {
    return c.invalid("tags and values are not the same shape: {} != {}", c.input(0).to_string(),
                     c.input(1).to_string());
  }
  c.set_output(0, PartialShape::scalar());
  return Status::OK();
}

Status image_summary_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(scalar_input(c, 0, "the tag"));
  const PartialShape& images = c.input(1);
  if (images.rank_known()) {
    if (images.rank() != 4) {
      return c.invalid("images must be 4-D [batch, height, width, channels], got shape {}",
                       images.to_string());
    }
    int64_t channels = images.dims()[3];
    if (channels != -1 && channels != 1 && channels != 3 && channels != 4) {
      return c.invalid("images must have 1, 3 or 4 channels, got {}", channels);
    }
  }
  c.set_output(0, PartialShape::scalar());
  return Status::OK();
}

Status audio_summary_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(scalar_input(c, 0, "the tag"));
  TROUPE_RETURN_IF_ERROR(scalar_input(c, 2, "the sample rate"));
  const PartialShape& audio = c.input(1);
  if (audio.rank_known() && audio.rank() != 2 && audio.rank() != 3) {
    return c.invalid("audio must be [batch, frames] or [batch, frames, channels], got shape {}",
                     audio.to_string());
  }
  c.set_output(0, PartialShape::scalar());
  return Status::OK();
}

Status merge_summary_shape(InferenceContext& c) {
  for (int i = 0; i < c.num_inputs(); ++i) {
    if (c.input(i).rank_known() && c.input(i).rank() > 1) {
      return c.invalid("input {} must be a scalar or a vector of summaries, got shape {}", i,
                       c.input(i).to_string());
    }
  }
  c.set_output(0, PartialShape::scalar());
  return Status::OK();
}

}  // namespace

void register_summary_ops(OpRegistry& r) {
  must_register(r, OpDefBuilder("ScalarSummary")
                       .input("tags: string")
                       .input("values: T")
                       .output("summary: string")
                       .attr("T: {float32, float64, int32, int64}")
                       .shape_fn(scalar_summary_shape));
  must_register(r, OpDefBuilder("HistogramSummary")
                       .input("tag: string")
                       .input("values: T")
                       .output("summary: string")
                       .attr("T: {float32, float64, int32, int64} = float32")
                       .shape_fn(summary_of_tag));
  must_register(r, OpDefBuilder("ImageSummary")
                       .input("tag: string")
                       .input("tensor: T")
                       .output("summary: string")
                       .attr("max_images: int >= 1 = 3")
                       .attr("T: {float32, float64, uint8} = float32")
                       .shape_fn(image_summary_shape));
  must_register(r, OpDefBuilder("AudioSummaryV2")
                       .input("tag: string")
                       .input("tensor: float32")
                       .input("sample_rate: float32")
                       .output("summary: string")
                       .attr("max_outputs: int >= 1 = 3")
                       .shape_fn(audio_summary_shape));
  must_register(r, OpDefBuilder("TensorSummaryV2")
                       .input("tag: string")
                       .input("tensor: T")
                       .input("serialized_summary_metadata: string")
                       .output("summary: string")
                       .attr("T: type")
                       .shape_fn(summary_of_tag));
  must_register(r, OpDefBuilder("MergeSummary")
                       .input("inputs: N * string")
                       .output("summary: string")
                       .attr("N: int >= 1")
                       .shape_fn(merge_summary_shape));
}

namespace ops {

Output ScalarSummary(const Scope& s, const Input& tags, const Input& values) {
  return NodeBuilder(s, "ScalarSummary").input(tags).input(values).finalize();
}

Output HistogramSummary(const Scope& s, const Input& tag, const Input& values) {
  return NodeBuilder(s, "HistogramSummary").input(tag).input(values).finalize();
}

Output ImageSummary(const Scope& s, const Input& tag, const Input& tensor, int64_t max_images) {
  return NodeBuilder(s, "ImageSummary")
      .input(tag)
      .input(tensor)
      .attr("max_images", max_images)
      .finalize();
}

Output AudioSummaryV2(const Scope& s, const Input& tag, const Input& tensor,
                      const Input& sample_rate, int64_t max_outputs) {
  return NodeBuilder(s, "AudioSummaryV2")
      .input(tag)
      .input(tensor)
      .input(sample_rate)
      .attr("max_outputs", max_outputs)
      .finalize();
}

Output TensorSummaryV2(const Scope& s, const Input& tag, const Input& tensor,
                       const Input& serialized_summary_metadata) {
  return NodeBuilder(s, "TensorSummaryV2")
      .input(tag)
      .input(tensor)
      .input(serialized_summary_metadata)
      .finalize();
}

Output MergeSummary(const Scope& s, const std::vector<Input>& inputs) {
  return NodeBuilder(s, "MergeSummary").input_list(inputs).finalize();
}

}  // namespace ops
}  // namespace troupe
