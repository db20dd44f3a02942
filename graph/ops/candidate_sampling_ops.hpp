// Builders for the candidate samplers of sampled losses (nn.nce_loss, nn.sampled_softmax_loss),
// TensorFlow's: num_sampled classes of [0, range_max) drawn uniformly, log-uniformly (class k
// with probability log((k + 2) / (k + 1)) / log(range_max + 1)), from fixed unigram weights, or
// from the true classes seen so far, distinct if `unique`, with the expected number of times
// each true class [batch, num_true] and each sampled class would be drawn; every class
// (AllCandidateSampler); and where sampled classes are true ones (ComputeAccidentalHits).
// Seeded as the random ops (graph/ops/random_ops.hpp); the distributions are described in
// devices/cpu/random/candidate_sampler_kernels.cpp.
#pragma once

#include <string>
#include <vector>

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
SampledCandidates LearnedUnigramCandidateSampler(const Scope& scope, const Input& true_classes,
                                                 const CandidateSamplerAttrs& attrs);

// The fixed unigram distribution: exactly one of `vocab_file` (CSV lines whose last field is
// a class's weight) and `unigrams`.
struct UnigramWeights {
  std::string vocab_file;
  std::vector<float> unigrams;
  float distortion = 1.0f;
  int64_t num_reserved_ids = 0;
  int64_t num_shards = 1;
  int64_t shard = 0;
};
SampledCandidates FixedUnigramCandidateSampler(const Scope& scope, const Input& true_classes,
                                               const CandidateSamplerAttrs& attrs,
                                               const UnigramWeights& weights);
// Every class of [0, attrs.num_sampled) (attrs.range_max is not used).
SampledCandidates AllCandidateSampler(const Scope& scope, const Input& true_classes,
                                      const CandidateSamplerAttrs& attrs);

struct AccidentalHits {
  Output indices;  // int32 [hits]: the row of true_classes
  Output ids;      // int64 [hits]: the place in sampled_candidates
  Output weights;  // float32 [hits]: -FLT_MAX
};
AccidentalHits ComputeAccidentalHits(const Scope& scope, const Input& true_classes,
                                     const Input& sampled_candidates, int64_t num_true);

}  // namespace troupe::ops
