// Builders for random ops, TensorFlow's: each draws new numbers every time it runs, from a
// Philox generator seeded by (seed, seed2) (devices/cpu/random/). Equal seeds give equal
// numbers on every run of a program and every task; (0, 0) seeds from the system. The Python
// layer derives the seeds from the graph-level and op-level seeds as tf.set_random_seed
// documents.
//   RandomUniform        floats in [0, 1) of the shape given
//   RandomStandardNormal floats of mean 0, standard deviation 1
//   TruncatedNormal      the same, drawn again where more than 2 standard deviations out
//   RandomUniformInt     integers in [minval, maxval)
//   RandomShuffle        `value` with its first dimension permuted
//   Multinomial          `num_samples` class indices per row of `logits`
#pragma once

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

struct RandomOptions {
  int64_t seed = 0;
  int64_t seed2 = 0;
};

Output RandomUniform(const Scope& scope, const Input& shape, DataType dtype,
                     RandomOptions options = {});
Output RandomStandardNormal(const Scope& scope, const Input& shape, DataType dtype,
                            RandomOptions options = {});
Output TruncatedNormal(const Scope& scope, const Input& shape, DataType dtype,
                       RandomOptions options = {});
Output RandomUniformInt(const Scope& scope, const Input& shape, const Input& minval,
                        const Input& maxval, RandomOptions options = {});
Output RandomShuffle(const Scope& scope, const Input& value, RandomOptions options = {});
Output Multinomial(const Scope& scope, const Input& logits, const Input& num_samples,
                   DataType output_dtype = DataType::kInt64, RandomOptions options = {});

}  // namespace troupe::ops
