// Tests of SparseConditionalAccumulator: rows summed by index and averaged over the gradients
// that had them (duplicates within one gradient counted once), SUM, stale gradients dropped, a
// take waiting for enough gradients and cancelled, and TensorFlow's shape checks.
#include <boost/test/unit_test.hpp>

#include "devices/run_graph.hpp"
#include "troupe/devices/sparse_conditional_accumulator.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;

namespace {

Tensor rows(const std::vector<double>& values, int64_t n) {
  return Tensor::from_vector<double>(values, TensorShape{n, 2}).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sparse_conditional_accumulator)

BOOST_AUTO_TEST_CASE(a_take_averages_each_row_over_the_gradients_that_had_it) {
  SparseConditionalAccumulator acc("table", DataType::kDouble, PartialShape({5, 2}));
  const Tensor shape = Tensor::from_vector<int64_t>({5, 2});
  BOOST_TEST(
      *acc.apply(0, Tensor::from_vector<int64_t>({4, 1, 4}), rows({1, 1, 2, 2, 3, 3}, 3), &shape));
  std::vector<Tensor> taken;
  auto waiter = acc.take(2, [&](const Status& s, std::vector<Tensor> result) {
    BOOST_TEST(s.ok());
    taken = std::move(result);
  });
  BOOST_TEST(waiter != GradientAccumulator::kServed);
  BOOST_TEST(taken.empty());
  BOOST_TEST(*acc.apply(0, Tensor::from_vector<int64_t>({4}), rows({10, 20}, 1), nullptr));
  BOOST_REQUIRE(taken.size() == 3u);
  check_tensor<int64_t>(taken[0], TensorShape{2}, {1, 4});
  check_tensor<double>(taken[1], TensorShape{2, 2}, {2, 2, (4 + 10) / 2.0, (4 + 20) / 2.0});
  check_tensor<int64_t>(taken[2], TensorShape{2}, {5, 2});
  BOOST_TEST(acc.global_step() == 1);
  // Stale now: computed at step 0.
  BOOST_TEST(!*acc.apply(0, Tensor::from_vector<int64_t>({0}), rows({1, 1}, 1), nullptr));
  BOOST_TEST(acc.num_accumulated() == 0);
}

BOOST_AUTO_TEST_CASE(sum_reduction_and_cancelled_takes) {
  SparseConditionalAccumulator acc("sum", DataType::kDouble, PartialShape::unknown(),
                                   AccumulatorReduction::kSum);
  BOOST_TEST(*acc.apply(0, Tensor::from_vector<int64_t>({2}), rows({1, 2}, 1), nullptr));
  Status reason;
  auto waiter = acc.take(2, [&](const Status& s, std::vector<Tensor>) { reason = s; });
  BOOST_TEST(acc.cancel(waiter, errors::Cancelled("step cancelled")));
  check_error(reason, Code::kCancelled, "step cancelled");
  BOOST_TEST(*acc.apply(0, Tensor::from_vector<int64_t>({2}), rows({1, 2}, 1), nullptr));
  std::vector<Tensor> taken;
  acc.take(2, [&](const Status&, std::vector<Tensor> result) { taken = std::move(result); });
  BOOST_REQUIRE(taken.size() == 3u);
  check_tensor<double>(taken[1], TensorShape{1, 2}, {2, 4});
  check_tensor<int64_t>(taken[2], TensorShape{2}, {-1, 2});
}

BOOST_AUTO_TEST_CASE(gradients_that_do_not_fit_are_invalid_argument) {
  SparseConditionalAccumulator acc("table", DataType::kDouble, PartialShape({5, 2}));
  check_error(acc.apply(0, Tensor::from_vector<int64_t>({5}), rows({1, 1}, 1), nullptr).status(),
              Code::kInvalidArgument,
              "sparse accumulator 'table': Shape mismatch: index of slice 0 exceeded limits of "
              "shape; index is 5 exceeded 5");
  check_error(acc.apply(0, Tensor::from_vector<int64_t>({0, 1}), rows({1, 1}, 1), nullptr).status(),
              Code::kInvalidArgument, "Expected 2 non-empty input values, got 1");
  check_error(acc.apply(0, Tensor::from_vector<int32_t>({0}), rows({1, 1}, 1), nullptr).status(),
              Code::kInvalidArgument, "Input indices should be vector");
  check_error(acc.apply(0, Tensor::from_vector<int64_t>({0}),
                        Tensor::from_vector<float>({1, 1}, TensorShape{1, 2}).value(), nullptr)
                  .status(),
              Code::kInvalidArgument, "takes float64 gradients, got float32");
  const Tensor wrong = Tensor::from_vector<int64_t>({6, 2});
  check_error(acc.apply(0, Tensor::from_vector<int64_t>({0}), rows({1, 1}, 1), &wrong).status(),
              Code::kInvalidArgument, "expected shape dim 0 to be 5, got 6");
  BOOST_TEST(acc.num_accumulated() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
