// The planted click-through task and the AUC (planted_ctr.hpp).
#include "troupe/apps/data/planted_ctr.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace troupe {
namespace {

// Riemann's zeta(a) for a > 1: a partial sum and the Euler-Maclaurin tail.
double zeta(double a) {
  constexpr int kTerms = 1000;
  double sum = 0;
  for (int k = 1; k <= kTerms; ++k)
    sum += std::pow(k, -a);
  const double n = kTerms;
  return sum + std::pow(n, 1 - a) / (a - 1) - 0.5 * std::pow(n, -a) + a * std::pow(n, -a - 1) / 12;
}

}  // namespace

StatusOr<PlantedCtr> PlantedCtr::create(int64_t table_rows, double zipf, uint64_t seed) {
  if (table_rows < kCtrCategorical) {
    return errors::InvalidArgument(
        "table_rows={}: the table needs at least {} rows, one per "
        "categorical feature",
        table_rows, kCtrCategorical);
  }
  if (!(zipf > 1)) {
    return errors::InvalidArgument("zipf={}: the Zipf exponent must be above 1", zipf);
  }
  PlantedCtr ctr;
  ctr.table_rows_ = table_rows;
  ctr.rows_per_feature_ = table_rows / kCtrCategorical;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> id_weight(0.0f, 0.6f), dense_weight(0.0f, 0.5f);
  ctr.id_weights_.resize(table_rows);
  for (float& w : ctr.id_weights_)
    w = id_weight(rng);
  ctr.dense_weights_.resize(kCtrDense);
  for (float& w : ctr.dense_weights_)
    w = dense_weight(rng);
  // Rank k - 1 has probability k^-zipf / zeta(zipf); the ranks past the last are the last.
  const double total = zeta(zipf);
  ctr.rank_cdf_.resize(ctr.rows_per_feature_);
  double cumulative = 0;
  for (int64_t k = 0; k < ctr.rows_per_feature_; ++k) {
    cumulative += std::pow(static_cast<double>(k + 1), -zipf) / total;
    ctr.rank_cdf_[k] = cumulative;
  }
  ctr.rank_cdf_.back() = 1.0;
  return ctr;
}

CtrBatch PlantedCtr::sample(int64_t n, std::mt19937_64& rng) const {
  CtrBatch batch{Tensor(DataType::kInt64, TensorShape{n, kCtrCategorical}),
                 Tensor(DataType::kFloat, TensorShape{n, kCtrDense}),
                 Tensor(DataType::kFloat, TensorShape{n}), std::vector<double>(n)};
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  int64_t* ids = batch.ids.data<int64_t>();
  float* dense = batch.dense.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    double logit = -1.0;
    for (int f = 0; f < kCtrCategorical; ++f) {
      const int64_t rank =
          std::lower_bound(rank_cdf_.begin(), rank_cdf_.end(), uniform(rng)) - rank_cdf_.begin();
      const int64_t id = f * rows_per_feature_ + std::min(rank, rows_per_feature_ - 1);
      ids[i * kCtrCategorical + f] = id;
      logit += id_weights_[id];
    }
    for (int d = 0; d < kCtrDense; ++d) {
      dense[i * kCtrDense + d] = normal(rng);
      logit += dense[i * kCtrDense + d] * dense_weights_[d];
    }
    batch.planted[i] = logit;
    batch.labels.data<float>()[i] = uniform(rng) < 1.0 / (1.0 + std::exp(-logit)) ? 1.0f : 0.0f;
  }
  return batch;
}

StatusOr<double> area_under_roc(const std::vector<float>& labels,
                                const std::vector<double>& scores) {
  if (labels.size() != scores.size()) {
    return errors::InvalidArgument("area under ROC: {} labels for {} scores", labels.size(),
                                   scores.size());
  }
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  // The rank sum of the positives, ties given their mean rank (Mann-Whitney U).
  double positive_ranks = 0, positives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && scores[order[j + 1]] == scores[order[i]])
      ++j;
    const double rank = (static_cast<double>(i + j)) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) {
      if (labels[order[k]] > 0.5f) {
        positive_ranks += rank;
        positives += 1;
      }
    }
    i = j + 1;
  }
  const double negatives = static_cast<double>(labels.size()) - positives;
  if (positives == 0 || negatives == 0) {
    return errors::InvalidArgument("area under ROC: the {} labels are all of one class",
                                   labels.size());
  }
  return (positive_ranks - positives * (positives + 1) / 2.0) / (positives * negatives);
}

}  // namespace troupe
