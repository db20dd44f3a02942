// Tests of RestoreV2 (devices/cpu/checkpoint_kernels.cpp) and of initialize_from_checkpoint
// (graph/variables.hpp), the C++ form of tf.train.init_from_checkpoint: tensors and slices read
// from a .npz checkpoint when the initializer runs, and the errors that name node, file and
// tensor.
#include <filesystem>

#include "devices/run_graph.hpp"
#include "temp_files.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/formats/npz.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::TempDir;

namespace {

Tensor strings(const std::vector<std::string>& values) {
  Tensor t(DataType::kString, TensorShape{static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.data<std::string>());
  return t;
}

// A checkpoint "<dir>/model-3" holding w [3, 2] = 0..5 (float) and step = 7 (int64).
std::string write_checkpoint(const TempDir& dir) {
  const std::string prefix = dir.file("model-3");
  NamedTensors tensors;
  tensors.emplace_back(
      "w", value_or_throw(Tensor::from_vector<float>({0, 1, 2, 3, 4, 5}, TensorShape{3, 2})));
  tensors.emplace_back("step", Tensor(int64_t{7}));
  BOOST_REQUIRE(write_npz(prefix + ".npz", tensors).ok());
  return prefix;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(checkpoint_kernels)

BOOST_AUTO_TEST_CASE(restore_reads_tensors_and_slices_by_prefix_or_file_name) {
  TempDir dir;
  const std::string prefix = write_checkpoint(dir);
  Scope s = Scope::new_root();
  auto restored =
      ops::RestoreV2(s, prefix, strings({"step", "w", "w"}), strings({"", "", "3 2 1,2:1,1"}),
                     {DataType::kInt64, DataType::kFloat, DataType::kFloat});
  BOOST_REQUIRE_EQUAL(restored.size(), 3u);
  // A constant slice spec gives the output its shape before anything runs.
  BOOST_TEST(restored[2].shape().to_string() == "[2,1]");
  auto values = run_graph(s, restored);
  BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
  check_tensor<int64_t>(values->at(0), TensorShape{}, {7});
  check_tensor<float>(values->at(1), TensorShape{3, 2}, {0, 1, 2, 3, 4, 5});
  check_tensor<float>(values->at(2), TensorShape{2, 1}, {3, 5});

  Scope by_file = Scope::new_root();
  auto step = ops::RestoreV2(by_file, prefix + ".npz", strings({"step"}), strings({""}),
                             {DataType::kInt64});
  auto again = run_graph(by_file, step);
  BOOST_REQUIRE(again.ok());
  check_tensor<int64_t>(again->at(0), TensorShape{}, {7});
}

BOOST_AUTO_TEST_CASE(what_does_not_match_names_the_node_file_and_tensor) {
  TempDir dir;
  const std::string prefix = write_checkpoint(dir);
  auto run = [&](const std::string& file, const std::string& name, const std::string& spec,
                 DataType dtype) {
    Scope s = Scope::new_root();
    auto out =
        ops::RestoreV2(s.with_op_name("restore"), file, strings({name}), strings({spec}), {dtype});
    return run_graph(s, out).status();
  };
  check_error(run(prefix, "w", "", DataType::kDouble), Code::kInvalidArgument,
              "node 'restore' (RestoreV2): tensor 'w' of checkpoint '" + prefix +
                  ".npz' is float32, expected float64 (dtypes[0])");
  check_error(run(prefix, "bias", "", DataType::kFloat), Code::kNotFound,
              "Key bias not found in checkpoint '" + prefix + ".npz'");
  check_error(run(dir.file("model-9"), "w", "", DataType::kFloat), Code::kNotFound,
              "model-9.npz nor its shards");
  check_error(run(prefix, "w", "4 2 0,2:-", DataType::kFloat), Code::kInvalidArgument,
              "the tensor's shape is [3,2], the slice is of a [4,2] tensor");
  check_error(run(prefix, "w", "3 2 x", DataType::kFloat), Code::kInvalidArgument,
              "shape and slice '3 2 x'");
}

BOOST_AUTO_TEST_CASE(a_variables_initializer_reads_the_checkpoint_when_it_runs) {
  TempDir dir;
  const std::string prefix = write_checkpoint(dir);
  Scope s = Scope::new_root();
  ModelVariable w = make_variable(s, "w", Tensor(DataType::kFloat, TensorShape{3, 2}));
  ModelVariable shard = make_variable(s, "shard", Tensor(DataType::kFloat, TensorShape{1, 2}));
  auto w_init = initialize_from_checkpoint(s, "w", prefix, "w");
  BOOST_REQUIRE_MESSAGE(w_init.ok(), w_init.status().to_string());
  auto shard_init = initialize_from_checkpoint(s, "shard", prefix, "w", "3 2 2,1:-");
  BOOST_REQUIRE(shard_init.ok());
  BOOST_TEST(w_init->initializer.name() != w.initializer.name());
  BOOST_TEST(s.graph().variable_record("w")->initializer == w_init->initializer.name());
  // Built after the change, the global initializer runs the new initializers.
  Operation init = global_variables_initializer(s);
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);
  BOOST_REQUIRE(run_graph(s, {}, {}, {init}, &device).ok());
  auto values = run_graph(s, {w.ref, shard.ref}, {}, {}, &device);
  BOOST_REQUIRE(values.ok());
  check_tensor<float>(values->at(0), TensorShape{3, 2}, {0, 1, 2, 3, 4, 5});
  check_tensor<float>(values->at(1), TensorShape{1, 2}, {4, 5});

  std::filesystem::remove(prefix + ".npz");
  check_error(run_graph(s, {}, {}, {init}, &device).status(), Code::kNotFound,
              "node 'checkpoint_initializer/RestoreV2' (RestoreV2)");
}

BOOST_AUTO_TEST_CASE(the_read_runs_on_the_cpu_of_the_variables_task) {
  Scope s = Scope::new_root();
  make_variable(s.with_device("/job:ps/task:1/device:GPU:0"), "w",
                Tensor(DataType::kFloat, TensorShape{2}));
  auto w = initialize_from_checkpoint(s, "w", "/ckpt/model", "w");
  BOOST_REQUIRE(w.ok());
  const Node* restore = s.graph().find("checkpoint_initializer/RestoreV2");
  BOOST_REQUIRE(restore != nullptr);
  BOOST_TEST(restore->requested_device() == "/job:ps/task:1/device:CPU:0");
  check_error(initialize_from_checkpoint(s, "nothing", "/ckpt/model", "w").status(),
              Code::kNotFound, "no model variable named 'nothing'");
  BOOST_TEST(!s.ok());  // recorded in the scope too, as every builder call's error
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
