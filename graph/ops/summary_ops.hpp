// Builders for summary ops: each makes a serialized tensorflow.Summary protobuf (a string
// scalar) from tensors, on whatever device it is placed, for a FileWriter to write into
// TensorBoard's event files. The encodings are TensorFlow's (devices/cpu/summary_kernels.cpp):
//   ScalarSummary     tags and values of the same shape -> one simple_value per pair
//   HistogramSummary  tag, values -> a HistogramProto with TensorFlow's default buckets
//   ImageSummary      tag, [batch, height, width, 1|3|4] floats -> up to max_images PNGs,
//                     tagged "<tag>/image" (one) or "<tag>/image/<i>"
//   AudioSummaryV2    tag, [batch, frames(, channels)] floats in [-1, 1], sample rate ->
//                     up to max_outputs 16-bit WAVs, tagged "<tag>/audio(/<i>)"
//   TensorSummaryV2   tag, tensor, serialized SummaryMetadata -> the tensor as a TensorProto
//                     (tf.summary.text writes strings with the "text" plugin)
//   MergeSummary      N serialized Summaries -> one with all their values; a tag in two is
//                     InvalidArgument
#pragma once

#include <vector>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

Output ScalarSummary(const Scope& scope, const Input& tags, const Input& values);
Output HistogramSummary(const Scope& scope, const Input& tag, const Input& values);
Output ImageSummary(const Scope& scope, const Input& tag, const Input& tensor, int64_t max_images);
Output AudioSummaryV2(const Scope& scope, const Input& tag, const Input& tensor,
                      const Input& sample_rate, int64_t max_outputs);
Output TensorSummaryV2(const Scope& scope, const Input& tag, const Input& tensor,
                       const Input& serialized_summary_metadata);
Output MergeSummary(const Scope& scope, const std::vector<Input>& inputs);

}  // namespace troupe::ops
