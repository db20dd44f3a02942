// Tests of the N-dimensional gathers and scatters: GatherNd of elements, rows and whole tensors;
// ScatterNd summing duplicates; ScatterNdUpdate/Add/Sub on a variable in place; TensorScatter
// on a copy; an index outside the tensor is InvalidArgument naming the node, the position and
// the index, and nothing is written.
#include "devices/run_graph.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

namespace {

Tensor matrix(int64_t rows, int64_t cols, const std::vector<double>& values) {
  return Tensor::from_vector<double>(values, TensorShape{rows, cols}).value();
}

Tensor index_matrix(int64_t rows, int64_t cols, const std::vector<int64_t>& values) {
  return Tensor::from_vector<int64_t>(values, TensorShape{rows, cols}).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(scatter_nd_kernels)

BOOST_AUTO_TEST_CASE(gather_nd_takes_elements_rows_or_everything) {
  Scope s = Scope::new_root();
  const Tensor params = matrix(3, 2, {1, 2, 3, 4, 5, 6});
  check_tensor<double>(run_one(s, ops::GatherNd(s, params, index_matrix(2, 2, {2, 1, 0, 0}))),
                       TensorShape{2}, {6, 1});
  check_tensor<double>(run_one(s, ops::GatherNd(s, params, index_matrix(2, 1, {2, 0}))),
                       TensorShape{2, 2}, {5, 6, 1, 2});
  // indices [2, 1, 2]: a batch of batches; K = 0 takes the whole tensor.
  auto batched = ops::GatherNd(
      s, params, Tensor::from_vector<int32_t>({1, 1, 0, 1}, TensorShape{2, 1, 2}).value());
  check_tensor<double>(run_one(s, batched), TensorShape{2, 1}, {4, 2});
  check_tensor<double>(
      run_one(s, ops::GatherNd(s, params, Tensor(DataType::kInt32, TensorShape{1, 0}))),
      TensorShape{1, 3, 2}, {1, 2, 3, 4, 5, 6});
  // Strings too.
  auto words = Tensor::from_vector<std::string>({"a", "b", "c"});
  check_tensor<std::string>(run_one(s, ops::GatherNd(s, words, index_matrix(2, 1, {2, 0}))),
                            TensorShape{2}, {"c", "a"});
}

BOOST_AUTO_TEST_CASE(scatter_nd_sums_duplicates_into_zeros) {
  Scope s = Scope::new_root();
  auto out =
      ops::ScatterNd(s, index_matrix(3, 1, {4, 3, 4}), Tensor::from_vector<double>({9, 10, 11}),
                     Tensor::from_vector<int64_t>({6}));
  check_tensor<double>(run_one(s, out), TensorShape{6}, {0, 0, 0, 10, 20, 0});
  auto rows = ops::ScatterNd(s, Tensor::from_vector<int32_t>({1}, TensorShape{1, 1}).value(),
                             matrix(1, 2, {7, 8}), Tensor::from_vector<int32_t>({2, 2}));
  check_tensor<double>(run_one(s, rows), TensorShape{2, 2}, {0, 0, 7, 8});
}

BOOST_AUTO_TEST_CASE(scatter_nd_updates_a_variable_in_place_and_tensor_scatter_a_copy) {
  Scope s = Scope::new_root();
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 2);
  auto v = ops::Variable(s, TensorShape{2, 2}, DataType::kDouble);
  BOOST_REQUIRE(
      run_graph(s, {}, {}, {ops::Assign(s, v, matrix(2, 2, {1, 2, 3, 4})).op()}, &device).ok());
  const Tensor at = index_matrix(2, 2, {0, 1, 1, 0});
  const Tensor values = Tensor::from_vector<double>({10, 20});
  auto run = [&](const Output& out) {
    auto result = run_graph(s, {out}, {}, {}, &device);
    BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
    return result->at(0);
  };
  check_tensor<double>(run(ops::ScatterNdRef(s, "Add", v, at, values)), TensorShape{2, 2},
                       {1, 12, 23, 4});
  check_tensor<double>(run(ops::ScatterNdRef(s, "Sub", v, at, values)), TensorShape{2, 2},
                       {1, 2, 3, 4});
  check_tensor<double>(
      run(ops::ScatterNdRef(s, "Update", v, index_matrix(1, 1, {1}), matrix(1, 2, {7, 8}))),
      TensorShape{2, 2}, {1, 2, 7, 8});
  const Tensor base = matrix(2, 2, {1, 1, 1, 1});
  check_tensor<double>(run(ops::TensorScatter(s, "Update", base, at, values)), TensorShape{2, 2},
                       {1, 10, 20, 1});
  check_tensor<double>(run(ops::TensorScatter(s, "Add", base, at, values)), TensorShape{2, 2},
                       {1, 11, 21, 1});
  check_tensor<double>(run(ops::TensorScatter(s, "Sub", base, at, values)), TensorShape{2, 2},
                       {1, -9, -19, 1});
  check_tensor<double>(run(ops::Identity(s, v)), TensorShape{2, 2}, {1, 2, 7, 8});
}

BOOST_AUTO_TEST_CASE(an_index_outside_is_invalid_argument_and_writes_nothing) {
  Scope s = Scope::new_root();
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 2);
  auto v = ops::Variable(s.with_op_name("table"), TensorShape{3}, DataType::kInt64);
  BOOST_REQUIRE(run_graph(s, {}, {},
                          {ops::Assign(s, v, Tensor::from_vector<int64_t>({1, 2, 3})).op()},
                          &device)
                    .ok());
  auto status = [&](const Output& out) { return run_graph(s, {out}, {}, {}, &device).status(); };
  check_error(status(ops::ScatterNdRef(s.with_op_name("bump"), "Add", v, index_matrix(2, 1, {0, 3}),
                                       Tensor::from_vector<int64_t>({5, 5}))),
              Code::kInvalidArgument,
              "node 'bump' (ScatterNdAdd): indices[1] = [3] does not index into variable "
              "'table' shape [3]");
  check_tensor<int64_t>(run_graph(s, {ops::Identity(s, v)}, {}, {}, &device)->at(0), TensorShape{3},
                        {1, 2, 3});
  check_error(status(ops::GatherNd(
                  s.with_op_name("pick"), matrix(2, 2, {1, 2, 3, 4}),
                  Tensor::from_vector<int32_t>({0, 0, 1, 2, 1, -1}, TensorShape{1, 3, 2}).value())),
              Code::kInvalidArgument,
              "node 'pick' (GatherNd): indices[0,1] = [1, 2] does not index into param shape "
              "[2,2]");
  check_error(status(ops::ScatterNd(s, index_matrix(1, 1, {-1}), Tensor::from_vector<double>({1}),
                                    Tensor::from_vector<int64_t>({2}))),
              Code::kInvalidArgument, "indices[0] = [-1] does not index into output shape [2]");
  check_error(status(ops::ScatterNd(s, index_matrix(1, 1, {1}), matrix(1, 0, {}),
                                    Tensor::from_vector<int64_t>({2, 0}))),
              Code::kInvalidArgument, "Indices and updates specified for empty output shape [2,0]");
  // Shapes checked while building when known: K above the rank, updates of the wrong shape.
  Scope b = Scope::new_root();
  ops::GatherNd(b, matrix(2, 2, {1, 2, 3, 4}), index_matrix(1, 3, {0, 0, 0}));
  check_error(b.status(), Code::kInvalidArgument,
              "indices.shape[-1] must be <= the rank of params: saw 3 vs. 2");
  Scope u = Scope::new_root();
  ops::ScatterNd(u, index_matrix(2, 1, {0, 1}), Tensor::from_vector<double>({1, 2, 3}),
                 Tensor::from_vector<int64_t>({4}));
  check_error(u.status(), Code::kInvalidArgument,
              "updates has shape [3], expected indices.shape[:-1] + shape[K:] = [2]");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
