// Tests for apps/data/planted_ctr: the synthetic click-through sample (ids in each feature's
// rows, Zipf-skewed, labels drawn from the planted model, reproducible from the seeds) and
// the area under the ROC curve (known values, ties, errors).
#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "troupe/apps/data/planted_ctr.hpp"

namespace troupe {
using testing::check_error;

BOOST_AUTO_TEST_SUITE(planted_ctr)

BOOST_AUTO_TEST_CASE(a_sample_has_each_features_ids_skewed_and_planted_labels) {
  auto ctr = value_or_throw(PlantedCtr::create(2600, 2.0, /*seed=*/0));
  std::mt19937_64 rng(1);
  CtrBatch batch = ctr.sample(4000, rng);
  BOOST_TEST(batch.ids.shape().to_string() == "[4000,26]");
  BOOST_TEST(batch.dense.shape().to_string() == "[4000,13]");
  const int64_t* ids = batch.ids.data<int64_t>();
  int64_t first_rank = 0;
  for (int64_t i = 0; i < 4000; ++i) {
    for (int f = 0; f < kCtrCategorical; ++f) {
      const int64_t id = ids[i * kCtrCategorical + f];
      BOOST_REQUIRE(id >= f * 100);
      BOOST_REQUIRE(id < (f + 1) * 100);
      if (id == f * 100) ++first_rank;
    }
  }
  // Zipf(2): the first rank is drawn with probability 1 / zeta(2) = 0.608.
  BOOST_TEST(static_cast<double>(first_rank) / (4000 * 26) == 0.608,
             boost::test_tools::tolerance(0.02));
  // The labels follow the planted logits: the planted model ranks them well.
  std::vector<float> labels(batch.labels.data<float>(), batch.labels.data<float>() + 4000);
  BOOST_TEST(value_or_throw(area_under_roc(labels, batch.planted)) > 0.85);
  // The same seeds, the same sample.
  std::mt19937_64 again(1);
  CtrBatch repeat = value_or_throw(PlantedCtr::create(2600, 2.0, 0)).sample(4000, again);
  BOOST_TEST(std::equal(ids, ids + 4000 * 26, repeat.ids.data<int64_t>()));
  BOOST_TEST(repeat.planted == batch.planted);
}

BOOST_AUTO_TEST_CASE(bad_parameters_are_refused) {
  check_error(PlantedCtr::create(25, 2.0, 0).status(), Code::kInvalidArgument,
              "table_rows=25: the table needs at least 26 rows");
  check_error(PlantedCtr::create(100, 1.0, 0).status(), Code::kInvalidArgument,
              "zipf=1: the Zipf exponent must be above 1");
}

BOOST_AUTO_TEST_CASE(the_area_under_roc_counts_ordered_pairs_and_half_the_ties) {
  auto auc = [](std::vector<float> labels, std::vector<double> scores) {
    return value_or_throw(area_under_roc(labels, scores));
  };
  BOOST_TEST(auc({0, 0, 1, 1}, {0.1, 0.2, 0.3, 0.4}) == 1.0);
  BOOST_TEST(auc({1, 1, 0, 0}, {0.1, 0.2, 0.3, 0.4}) == 0.0);
  BOOST_TEST(auc({0, 1, 0, 1}, {0.5, 0.5, 0.5, 0.5}) == 0.5);
  // Pairs (positive, negative): (0.8 > 0.1) (0.8 > 0.4) (0.4 = 0.4: half) (0.4 > 0.1): 3.5 / 4.
  BOOST_TEST(auc({1, 0, 1, 0}, {0.8, 0.4, 0.4, 0.1}) == 0.875);
  check_error(area_under_roc({1, 1}, {0.1, 0.2}).status(), Code::kInvalidArgument,
              "the 2 labels are all of one class");
  check_error(area_under_roc({1, 0}, {0.1}).status(), Code::kInvalidArgument,
              "2 labels for 1 scores");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
