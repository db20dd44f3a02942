// Synthetic click-through data with a planted logistic model, for `troupe train
// --model=wide_deep` (the C++ side of examples/python/ctr_data.py, the same task): 26
// categorical features whose ids are Zipf-distributed over one table of `table_rows` rows
// (feature f owns rows [f * rows / 26, (f + 1) * rows / 26): its ranks, capped at the last
// one), 13 dense features drawn from a standard normal, and a click drawn with probability
// sigmoid(planted logit): a weight per id (normal, sd 0.6), a weight per dense feature (sd 0.5)
// and a bias of -1. The planted model's AUC on a sample is the best any model can reach there,
// so a trained model's AUC is checkable against it.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

inline constexpr int kCtrCategorical = 26;
inline constexpr int kCtrDense = 13;

struct CtrBatch {
  Tensor ids;                   // int64 [n, 26]
  Tensor dense;                 // float32 [n, 13]
  Tensor labels;                // float32 [n], 0 or 1
  std::vector<double> planted;  // the planted model's logit of each example
};

class PlantedCtr {
 public:
  // InvalidArgument for fewer than 26 rows or a Zipf exponent not above 1.
  static StatusOr<PlantedCtr> create(int64_t table_rows, double zipf, uint64_t seed);

  // n examples drawn with `rng`.
  CtrBatch sample(int64_t n, std::mt19937_64& rng) const;

  int64_t table_rows() const { return table_rows_; }

 private:
  PlantedCtr() = default;

  int64_t table_rows_ = 0, rows_per_feature_ = 0;
  std::vector<float> id_weights_, dense_weights_;
  std::vector<double> rank_cdf_;  // P(rank <= k) of the capped Zipf distribution
};

// The area under the ROC curve of `scores` for `labels` (> 0.5 is positive): the chance that
// a random positive scores above a random negative, ties counting half. InvalidArgument for
// sizes that differ or a sample without both classes.
StatusOr<double> area_under_roc(const std::vector<float>& labels,
                                const std::vector<double>& scores);

}  // namespace troupe
