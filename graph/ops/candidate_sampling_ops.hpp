// Builders for the candidate samplers of sampled losses (nn.nce_loss, nn.sampled_softmax_loss),
// TensorFlow's: num_sampled classes of [0, range_max) drawn uniformly or log-uniformly (class k
// with probability log((k + 2) / (k + 1)) / log(range_max + 1)), distinct if `unique`, with the
// expected number of times each true class [batch, num_true] and each sampled class would be
// drawn. Seeded as the random ops (graph/ops/random_ops.hpp).
#pragma once

#include "troupe/graph/node_builder.hpp"
#include "troupe/graph/ops/random_ops.hpp"

namespace troupe::ops {

struct CandidateSamplerAttrs {
  int64_t num_true = 1;
  int64_t num_sampled = 1;
  int64_t range_max = 1;
  bool unique = false;
  RandomOptions random;
};

struct SampledCandidates {
  Output sampled_candidates;      // int64 [num_sampled]
  Output true_expected_count;     // float32 [batch, num_true]
  Output sampled_expected_count;  // float32 [num_sampled]
};

// true_classes: int64 [batch, num_true].
SampledCandidates UniformCandidateSampler(const Scope& scope, const Input& true_classes,
                                          const CandidateSamplerAttrs& attrs);
SampledCandidates LogUniformCandidateSampler(const Scope& scope, const Input& true_classes,
                                             const CandidateSamplerAttrs& attrs);

}  // namespace troupe::ops
