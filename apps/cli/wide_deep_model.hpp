// `troupe train --model=wide_deep`: the wide-and-deep click-through model of
// examples/python/wide_deep.py, in C++, on the planted task of apps/data/planted_ctr.hpp.
// 26 categorical ids looked up in an embedding table (--embedding_dim wide) and a wide table
// (one weight per id), both partitioned over the ps tasks (one shard each, "div", as
// fixed_size_partitioner and embedding_lookup split them), 13 dense features, an MLP
// (--deep_units) on the embeddings and dense features, sigmoid cross entropy. The gradients of
// the tables are IndexedSlices: a sparse optimizer (Adagrad by default) updates only the rows
// a step looked up, on the ps that holds them. Each worker draws its own examples; the
// evaluation scores a fixed test sample and reports its AUC beside the planted model's.
#pragma once

#include <cstdint>
#include <vector>

#include "troupe/apps/cli/training_problem.hpp"
#include "troupe/apps/data/planted_ctr.hpp"

namespace troupe::cli {

struct WideDeepOptions {
  int64_t embedding_dim = 16;
  std::vector<int64_t> deep_units = {400, 400};
  int num_shards = 1;  // of each table: one per ps task
  int64_t batch_size = 512;
  int64_t test_examples = 20000;
  uint64_t seed = 42;  // of the initial weights; worker i draws its examples from seed + 1 + i
  int task_index = 0;
};

// The model built in `scope` (under a replica_device_setter: the tables' shards and the
// layers' variables on the ps tasks) and its data. Errors of the builder calls.
StatusOr<TrainingProblem> build_wide_deep(const Scope& scope, const PlantedCtr& data,
                                          const WideDeepOptions& options);

}  // namespace troupe::cli
