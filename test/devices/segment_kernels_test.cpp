// Tests of the segment reductions: sorted (Sum, Mean, Prod, Min, Max; empty segments 0, or 1
// for Prod), unsorted (Sum, Prod, Min, Max; negative ids dropped, empty segments the
// reduction's identity), and sparse (sums, means and square-root means of the rows that
// indices pick, num_segments rows when given), the Mean and SqrtN gradient kernels, and
// TensorFlow's checks on indices and segment ids.
#include <cmath>
#include <limits>

#include "devices/run_graph.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

namespace {

// data = [[1, 2], [3, 4], [5, 6], [7, 8]].
Tensor data() {
  return Tensor::from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8}, TensorShape{4, 2}).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(segment_kernels)

BOOST_AUTO_TEST_CASE(sorted_reductions_fill_holes_with_zero_or_one_for_prod) {
  Scope s = Scope::new_root();
  const Tensor ids = Tensor::from_vector<int64_t>({0, 0, 2, 2});  // data() rows 0-1, 2-3
  auto reduce = [&](const char* reduction) {
    return run_one(s, ops::SegmentReduction(s, reduction, data(), ids));
  };
  check_tensor<double>(reduce("Sum"), TensorShape{3, 2}, {4, 6, 0, 0, 12, 14});
  check_tensor<double>(reduce("Mean"), TensorShape{3, 2}, {2, 3, 0, 0, 6, 7});
  check_tensor<double>(reduce("Prod"), TensorShape{3, 2}, {3, 8, 1, 1, 35, 48});
  check_tensor<double>(reduce("Min"), TensorShape{3, 2}, {1, 2, 0, 0, 5, 6});
  check_tensor<double>(reduce("Max"), TensorShape{3, 2}, {3, 4, 0, 0, 7, 8});
  check_error(run_graph(s, {ops::SegmentReduction(s.with_op_name("sorted"), "Sum", data(),
                                                  Tensor::from_vector<int32_t>({0, 1, 0, 1}))})
                  .status(),
              Code::kInvalidArgument, "node 'sorted' (SegmentSum): segment ids are not increasing");
  check_error(run_graph(s, {ops::SegmentReduction(s, "Max", data(),
                                                  Tensor::from_vector<int32_t>({0, 0, 0, -1}))})
                  .status(),
              Code::kInvalidArgument, "segment ids must be >= 0");
  check_error(
      run_graph(s, {ops::SegmentReduction(s, "Max", data(),
                                          Tensor::from_vector<int32_t>({-1, -1, 0, 0}))})
          .status(),
      Code::kInvalidArgument,
      "Segment id -1 out of range [0, 1), possibly because 'segment_ids' input is not sorted.");
  Scope b = Scope::new_root();
  ops::SegmentReduction(b, "Sum", data(), Tensor::from_vector<int32_t>({0, 1}));
  check_error(b.status(), Code::kInvalidArgument,
              "segment_ids should be the same size as dimension 0 of input");
}

BOOST_AUTO_TEST_CASE(unsorted_reductions_drop_negative_ids_and_start_from_the_identity) {
  Scope s = Scope::new_root();
  const Tensor ints = Tensor::from_vector<int32_t>({5, -3, 7, 2, 4, 6}, TensorShape{3, 2}).value();
  const Tensor ids = Tensor::from_vector<int32_t>({2, -1, 2});
  auto reduce = [&](const char* reduction) {
    return run_one(s, ops::UnsortedSegmentReduction(s, reduction, ints, ids, int32_t{3}));
  };
  const int32_t lowest = std::numeric_limits<int32_t>::lowest();
  const int32_t highest = std::numeric_limits<int32_t>::max();
  check_tensor<int32_t>(reduce("Sum"), TensorShape{3, 2}, {0, 0, 0, 0, 9, 3});
  check_tensor<int32_t>(reduce("Prod"), TensorShape{3, 2}, {1, 1, 1, 1, 20, -18});
  check_tensor<int32_t>(reduce("Min"), TensorShape{3, 2},
                        {highest, highest, highest, highest, 4, -3});
  check_tensor<int32_t>(reduce("Max"), TensorShape{3, 2}, {lowest, lowest, lowest, lowest, 5, 6});
  check_error(
      run_graph(s, {ops::UnsortedSegmentReduction(s, "Max", ints, ids, int32_t{2})}).status(),
      Code::kInvalidArgument, "segment_ids[0] = 2 is out of range [0, 2)");
}

BOOST_AUTO_TEST_CASE(sum_mean_and_sqrt_n_reduce_the_picked_rows_by_segment) {
  Scope s = Scope::new_root();
  const Tensor indices = Tensor::from_vector<int32_t>({0, 2, 3, 3});
  const Tensor ids = Tensor::from_vector<int32_t>({0, 0, 2, 2});  // segment 1 is empty
  check_tensor<double>(run_one(s, ops::SparseSegmentSum(s, data(), indices, ids)),
                       TensorShape{3, 2}, {6, 8, 0, 0, 14, 16});
  check_tensor<double>(run_one(s, ops::SparseSegmentMean(s, data(), indices, ids)),
                       TensorShape{3, 2}, {3, 4, 0, 0, 7, 8});
  const double r2 = std::sqrt(2.0);
  check_tensor<double>(run_one(s, ops::SparseSegmentSqrtN(s, data(), indices, ids)),
                       TensorShape{3, 2}, {6 / r2, 8 / r2, 0, 0, 14 / r2, 16 / r2});
  // int64 indices, int32 data, and num_segments beyond the last id.
  const Tensor ints = Tensor::from_vector<int32_t>({1, 2, 3}, TensorShape{3, 1}).value();
  check_tensor<int32_t>(run_one(s, ops::SparseSegmentReductionWithNumSegments(
                                       s, "Sum", ints, Tensor::from_vector<int64_t>({2, 2, 0}),
                                       Tensor::from_vector<int32_t>({1, 1, 3}), int64_t{5})),
                        TensorShape{5, 1}, {0, 6, 0, 1, 0});
  // No indices: no rows, or num_segments zero rows.
  const Tensor none = Tensor::from_vector<int32_t>({});
  check_tensor<double>(run_one(s, ops::SparseSegmentMean(s, data(), none, none)), TensorShape{0, 2},
                       {});
  check_tensor<double>(
      run_one(s, ops::SparseSegmentReductionWithNumSegments(s, "SqrtN", data(), none, none, 2)),
      TensorShape{2, 2}, {0, 0, 0, 0});
}

BOOST_AUTO_TEST_CASE(mean_and_sqrt_n_gradients_spread_each_segment_over_its_rows) {
  Scope s = Scope::new_root();
  const Tensor grad = Tensor::from_vector<double>({2, 4, 6, 8}, TensorShape{2, 2}).value();
  const Tensor indices = Tensor::from_vector<int32_t>({0, 2, 0});
  const Tensor ids = Tensor::from_vector<int32_t>({0, 0, 1});
  // Row 0 gets half of segment 0 and all of segment 1; row 2 half of segment 0.
  check_tensor<double>(
      run_one(s, ops::SparseSegmentReductionGrad(s, "Mean", grad, indices, ids, int32_t{4})),
      TensorShape{4, 2}, {1 + 6, 2 + 8, 0, 0, 1, 2, 0, 0});
  const double r2 = std::sqrt(2.0);
  check_tensor<double>(
      run_one(s, ops::SparseSegmentReductionGrad(s, "SqrtN", grad, indices, ids, int32_t{3})),
      TensorShape{3, 2}, {2 / r2 + 6, 4 / r2 + 8, 0, 0, 2 / r2, 4 / r2});
}

BOOST_AUTO_TEST_CASE(bad_indices_and_segment_ids_are_invalid_argument_naming_the_node) {
  Scope s = Scope::new_root();
  auto run = [&](const Output& out) { return run_graph(s, {out}).status(); };
  check_error(run(ops::SparseSegmentSum(s.with_op_name("lookup"), data(),
                                        Tensor::from_vector<int32_t>({0, 4}),
                                        Tensor::from_vector<int32_t>({0, 1}))),
              Code::kInvalidArgument,
              "node 'lookup' (SparseSegmentSum): indices[1] == 4 out of range [0, 4)");
  check_error(run(ops::SparseSegmentMean(s, data(), Tensor::from_vector<int32_t>({0, -1}),
                                         Tensor::from_vector<int32_t>({0, 1}))),
              Code::kInvalidArgument, "indices[1] == -1 out of range [0, 4)");
  check_error(run(ops::SparseSegmentSum(s, data(), Tensor::from_vector<int32_t>({0, 1, 2, 3}),
                                        Tensor::from_vector<int32_t>({0, 1, 0, 1}))),
              Code::kInvalidArgument, "segment ids are not increasing: segment_ids[2] = 0");
  // TensorFlow's order: the last id sets the rows, so an id above it is out of range.
  check_error(run(ops::SparseSegmentSum(s, data(), Tensor::from_vector<int32_t>({0, 1, 2, 3}),
                                        Tensor::from_vector<int32_t>({0, 1, 2, 0}))),
              Code::kInvalidArgument,
              "Segment id 1 out of range [0, 1), possibly because 'segment_ids' input is not "
              "sorted.");
  check_error(run(ops::SparseSegmentSum(s, data(), Tensor::from_vector<int32_t>({0}),
                                        Tensor::from_vector<int32_t>({-2}))),
              Code::kInvalidArgument, "segment ids must be >= 0: segment_ids[0] = -2");
  check_error(run(ops::SparseSegmentReductionWithNumSegments(
                  s, "Sum", data(), Tensor::from_vector<int32_t>({0}),
                  Tensor::from_vector<int32_t>({2}), int32_t{2})),
              Code::kInvalidArgument,
              "segment ids must be < num_segments: segment_ids[0] = 2 >= 2");
  // Lengths that differ: caught while building when the shapes are known.
  Scope b = Scope::new_root();
  ops::SparseSegmentSum(b, data(), Tensor::from_vector<int32_t>({0, 1}),
                        Tensor::from_vector<int32_t>({0}));
  check_error(b.status(), Code::kInvalidArgument, "segment_ids and indices should have same size");
  // ... and while running when they are not.
  auto unknown = ops::Placeholder(s, DataType::kInt32);
  auto sum = ops::SparseSegmentSum(s, data(), unknown, Tensor::from_vector<int32_t>({0}));
  check_error(run_graph(s, {sum}, {{unknown, Tensor::from_vector<int32_t>({0, 1})}}).status(),
              Code::kInvalidArgument, "segment_ids and indices should have same size, got 1 and 2");
}

BOOST_AUTO_TEST_CASE(gradient_kernels_check_segments_against_grad_and_indices_against_rows) {
  Scope s = Scope::new_root();
  const Tensor grad = Tensor::from_vector<double>({1, 2, 3}, TensorShape{3, 1}).value();
  auto run = [&](std::vector<int32_t> indices, std::vector<int32_t> ids) {
    return run_graph(s,
                     {ops::SparseSegmentReductionGrad(s, "Mean", grad, Tensor::from_vector(indices),
                                                      Tensor::from_vector(ids), 10)})
        .status();
  };
  check_error(run({8, 3, 0, 9}, {0, 1, 1, 4}), Code::kInvalidArgument,
              "Invalid number of segments");
  check_error(run({8, 3, 0, 10}, {0, 1, 2, 2}), Code::kInvalidArgument,
              "Index 10 out of range [0, 10)");
  check_error(run({8, 3, -1, 9}, {0, 1, 2, 2}), Code::kInvalidArgument,
              "Index -1 out of range [0, 10)");
  check_error(run({8, 3, 0, 9}, {-1, 0, 1, 1}), Code::kInvalidArgument,
              "Segment id -1 out of range [0, 3)");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
