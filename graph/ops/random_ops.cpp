// Random ops: definitions, shape functions and builders.
#include "troupe/graph/ops/random_ops.hpp"

#include "troupe/graph/ops/candidate_sampling_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

// The output is the shape named by input 0: known where the input's value is.
Status shape_from_shape_input(InferenceContext& c) {
  const PartialShape& s = c.input(0);
  if (s.rank_known() && s.rank() != 1) {
    return c.invalid("shape must be a vector, got shape {}", s.to_string());
  }
  if (auto dims = c.input_as_ints(0)) {
    for (int64_t d : *dims) {
      if (d < 0) return c.invalid("shape has a negative dimension {}", d);
    }
    c.set_output(0, PartialShape(*dims));
  } else {
    c.set_output(0, s.rank_known() && s.dim(0) >= 0 ? PartialShape::unknown_of_rank(s.dim(0))
                                                    : PartialShape::unknown());
  }
  return Status::OK();
}

// [num_sampled], [batch, num_true], [num_sampled]; true_classes must be [batch, num_true].
Status candidate_sampler_shape(InferenceContext& c) {
  const PartialShape& true_classes = c.input(0);
  const int64_t num_true = c.attr<int64_t>("num_true");
  const int64_t num_sampled = c.attr<int64_t>("num_sampled");
  if (true_classes.rank_known() &&
      (true_classes.rank() != 2 || (true_classes.dim(1) >= 0 && true_classes.dim(1) != num_true))) {
    return c.invalid("true_classes must be a matrix [batch_size, num_true = {}], got shape {}",
                     num_true, true_classes.to_string());
  }
  const int64_t batch = true_classes.rank_known() ? true_classes.dim(0) : -1;
  c.set_output(0, PartialShape({num_sampled}));
  c.set_output(1, PartialShape({batch, num_true}));
  c.set_output(2, PartialShape({num_sampled}));
  return Status::OK();
}

Status accidental_hits_shape(InferenceContext& c) {
  const PartialShape& true_classes = c.input(0);
  const int64_t num_true = c.attr<int64_t>("num_true");
  if (true_classes.rank_known() &&
      (true_classes.rank() != 2 || (true_classes.dim(1) >= 0 && true_classes.dim(1) != num_true))) {
    return c.invalid("true_classes must be a matrix [batch_size, num_true = {}], got shape {}",
                     num_true, true_classes.to_string());
  }
  if (c.input(1).rank_known() && c.input(1).rank() != 1) {
    return c.invalid("sampled_candidates must be a vector, got shape {}", c.input(1).to_string());
  }
  for (int i = 0; i < 3; ++i)
    c.set_output(i, PartialShape({-1}));
  return Status::OK();
}

Status multinomial_shape(InferenceContext& c) {
  const PartialShape& logits = c.input(0);
  if (logits.rank_known() && logits.rank() != 2) {
    return c.invalid("logits should be a matrix, got shape {}", logits.to_string());
  }
  int64_t batch = logits.rank_known() ? logits.dim(0) : -1;
  int64_t draws = -1;
  if (const Tensor* n = c.input_value(1); n != nullptr && n->num_elements() == 1) {
    draws = n->scalar<int32_t>();
  }
  c.set_output(0, PartialShape({batch, draws}));
  return Status::OK();
}

void register_float_random(OpRegistry& r, const char* name) {
  must_register(r, OpDefBuilder(name)
                       .input("shape: T")
                       .output("output: dtype")
                       .attr("seed: int = 0")
                       .attr("seed2: int = 0")
                       .attr("dtype: {float32, float64}")
                       .attr("T: {int32, int64}")
                       .stateful()
                       .shape_fn(shape_from_shape_input));
}

Output float_random(const char* op, const Scope& s, const Input& shape, DataType dtype,
                    ops::RandomOptions o) {
  return NodeBuilder(s, op)
      .input(shape)
      .attr("dtype", dtype)
      .attr("seed", o.seed)
      .attr("seed2", o.seed2)
      .finalize();
}

}  // namespace

void register_random_ops(OpRegistry& r) {
  for (const char* name : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"})
    register_float_random(r, name);
  must_register(r, OpDefBuilder("RandomUniformInt")
                       .input("shape: T")
                       .input("minval: Tout")
                       .input("maxval: Tout")
                       .output("output: Tout")
                       .attr("seed: int = 0")
                       .attr("seed2: int = 0")
                       .attr("Tout: {int32, int64}")
                       .attr("T: {int32, int64}")
                       .stateful()
                       .shape_fn(shape_from_shape_input));
  must_register(r, OpDefBuilder("RandomShuffle")
                       .input("value: T")
                       .output("output: T")
                       .attr("seed: int = 0")
                       .attr("seed2: int = 0")
                       .attr("T: type")
                       .stateful()
                       .shape_fn(shapes::unchanged));
  // Candidates for sampled losses (nn.nce_loss, nn.sampled_softmax_loss): num_sampled classes
  // of [0, range_max), uniformly or log-uniformly (Zipf), distinct if `unique`, with the
  // expected number of times each true and each sampled class would be drawn.
  for (const char* name : {"UniformCandidateSampler", "LogUniformCandidateSampler"}) {
    must_register(r, OpDefBuilder(name)
                         .input("true_classes: int64")
                         .output("sampled_candidates: int64")
                         .output("true_expected_count: float32")
                         .output("sampled_expected_count: float32")
                         .attr("num_true: int")
                         .attr("num_sampled: int")
                         .attr("unique: bool")
                         .attr("range_max: int")
                         .attr("seed: int = 0")
                         .attr("seed2: int = 0")
                         .stateful()
                         .shape_fn(candidate_sampler_shape));
  }
  // Candidates from weights given (unigrams, or the last field of each line of vocab_file),
  // each raised to `distortion`, after num_reserved_ids classes of weight 0; with num_shards,
  // the classes of one shard only (devices/cpu/random/candidate_sampler_kernels.cpp).
  must_register(r, OpDefBuilder("FixedUnigramCandidateSampler")
                       .input("true_classes: int64")
                       .output("sampled_candidates: int64")
                       .output("true_expected_count: float32")
                       .output("sampled_expected_count: float32")
                       .attr("num_true: int")
                       .attr("num_sampled: int")
                       .attr("unique: bool")
                       .attr("range_max: int")
                       .attr("vocab_file: string = \"\"")
                       .attr("distortion: float = 1.0")
                       .attr("num_reserved_ids: int = 0")
                       .attr("num_shards: int = 1")
                       .attr("shard: int = 0")
                       .attr("unigrams: list(float) = []")
                       .attr("seed: int = 0")
                       .attr("seed2: int = 0")
                       .stateful()
                       .shape_fn(candidate_sampler_shape));
  // Candidates from the true classes seen so far (every class starts with weight 1).
  must_register(r, OpDefBuilder("LearnedUnigramCandidateSampler")
                       .input("true_classes: int64")
                       .output("sampled_candidates: int64")
                       .output("true_expected_count: float32")
                       .output("sampled_expected_count: float32")
                       .attr("num_true: int")
                       .attr("num_sampled: int")
                       .attr("unique: bool")
                       .attr("range_max: int")
                       .attr("seed: int = 0")
                       .attr("seed2: int = 0")
                       .stateful()
                       .shape_fn(candidate_sampler_shape));
  // Every class of [0, num_sampled), each expected once.
  must_register(r, OpDefBuilder("AllCandidateSampler")
                       .input("true_classes: int64")
                       .output("sampled_candidates: int64")
                       .output("true_expected_count: float32")
                       .output("sampled_expected_count: float32")
                       .attr("num_true: int")
                       .attr("num_sampled: int")
                       .attr("unique: bool")
                       .attr("seed: int = 0")
                       .attr("seed2: int = 0")
                       .stateful()
                       .shape_fn(candidate_sampler_shape));
  // Where sampled candidates are true classes: (row, place in sampled_candidates, -FLT_MAX),
  // for sampled losses' remove_accidental_hits.
  must_register(r, OpDefBuilder("ComputeAccidentalHits")
                       .input("true_classes: int64")
                       .input("sampled_candidates: int64")
                       .output("indices: int32")
                       .output("ids: int64")
                       .output("weights: float32")
                       .attr("num_true: int")
                       .attr("seed: int = 0")
                       .attr("seed2: int = 0")
                       .shape_fn(accidental_hits_shape));
  must_register(r, OpDefBuilder("Multinomial")
                       .input("logits: T")
                       .input("num_samples: int32")
                       .output("output: output_dtype")
                       .attr("seed: int = 0")
                       .attr("seed2: int = 0")
                       .attr("T: {float32, float64}")
                       .attr("output_dtype: {int32, int64} = int64")
                       .stateful()
                       .shape_fn(multinomial_shape));
}

namespace ops {

Output RandomUniform(const Scope& s, const Input& shape, DataType dtype, RandomOptions o) {
  return float_random("RandomUniform", s, shape, dtype, o);
}

Output RandomStandardNormal(const Scope& s, const Input& shape, DataType dtype, RandomOptions o) {
  return float_random("RandomStandardNormal", s, shape, dtype, o);
}

Output TruncatedNormal(const Scope& s, const Input& shape, DataType dtype, RandomOptions o) {
  return float_random("TruncatedNormal", s, shape, dtype, o);
}

Output RandomUniformInt(const Scope& s, const Input& shape, const Input& minval,
                        const Input& maxval, RandomOptions o) {
  return NodeBuilder(s, "RandomUniformInt")
      .input(shape)
      .input(minval)
      .input(maxval)
      .attr("seed", o.seed)
      .attr("seed2", o.seed2)
      .finalize();
}

Output RandomShuffle(const Scope& s, const Input& value, RandomOptions o) {
  return NodeBuilder(s, "RandomShuffle")
      .input(value)
      .attr("seed", o.seed)
      .attr("seed2", o.seed2)
      .finalize();
}

Output Multinomial(const Scope& s, const Input& logits, const Input& num_samples,
                   DataType output_dtype, RandomOptions o) {
  return NodeBuilder(s, "Multinomial")
      .input(logits)
      .input(num_samples)
      .attr("output_dtype", output_dtype)
      .attr("seed", o.seed)
      .attr("seed2", o.seed2)
      .finalize();
}

namespace {

SampledCandidates candidate_sampler(const char* op_type, const Scope& s, const Input& true_classes,
                                    const CandidateSamplerAttrs& a) {
  Operation op = NodeBuilder(s, op_type)
                     .input(true_classes)
                     .attr("num_true", a.num_true)
                     .attr("num_sampled", a.num_sampled)
                     .attr("unique", a.unique)
                     .attr("range_max", a.range_max)
                     .attr("seed", a.random.seed)
                     .attr("seed2", a.random.seed2)
                     .finalize();
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1), Output(op, 2)};
}

}  // namespace

SampledCandidates UniformCandidateSampler(const Scope& s, const Input& true_classes,
                                          const CandidateSamplerAttrs& attrs) {
  return candidate_sampler("UniformCandidateSampler", s, true_classes, attrs);
}

SampledCandidates LogUniformCandidateSampler(const Scope& s, const Input& true_classes,
                                             const CandidateSamplerAttrs& attrs) {
  return candidate_sampler("LogUniformCandidateSampler", s, true_classes, attrs);
}

SampledCandidates LearnedUnigramCandidateSampler(const Scope& s, const Input& true_classes,
                                                 const CandidateSamplerAttrs& attrs) {
  return candidate_sampler("LearnedUnigramCandidateSampler", s, true_classes, attrs);
}

SampledCandidates FixedUnigramCandidateSampler(const Scope& s, const Input& true_classes,
                                               const CandidateSamplerAttrs& a,
                                               const UnigramWeights& w) {
  Operation op = NodeBuilder(s, "FixedUnigramCandidateSampler")
                     .input(true_classes)
                     .attr("num_true", a.num_true)
                     .attr("num_sampled", a.num_sampled)
                     .attr("unique", a.unique)
                     .attr("range_max", a.range_max)
                     .attr("vocab_file", w.vocab_file)
                     .attr("distortion", w.distortion)
                     .attr("num_reserved_ids", w.num_reserved_ids)
                     .attr("num_shards", w.num_shards)
                     .attr("shard", w.shard)
                     .attr("unigrams", w.unigrams)
                     .attr("seed", a.random.seed)
                     .attr("seed2", a.random.seed2)
                     .finalize();
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1), Output(op, 2)};
}

SampledCandidates AllCandidateSampler(const Scope& s, const Input& true_classes,
                                      const CandidateSamplerAttrs& a) {
  Operation op = NodeBuilder(s, "AllCandidateSampler")
                     .input(true_classes)
                     .attr("num_true", a.num_true)
                     .attr("num_sampled", a.num_sampled)
                     .attr("unique", a.unique)
                     .attr("seed", a.random.seed)
                     .attr("seed2", a.random.seed2)
                     .finalize();
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1), Output(op, 2)};
}

AccidentalHits ComputeAccidentalHits(const Scope& s, const Input& true_classes,
                                     const Input& sampled_candidates, int64_t num_true) {
  Operation op = NodeBuilder(s, "ComputeAccidentalHits")
                     .input(true_classes)
                     .input(sampled_candidates)
                     .attr("num_true", num_true)
                     .finalize();
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1), Output(op, 2)};
}

}  // namespace ops
}  // namespace troupe
