// Tests of checkpoint files (graph/formats/checkpoint_files.hpp): one archive or a set of
// shards, tensors assembled from slices spread over shards, and what is refused.
#include <chrono>
#include <numeric>

#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "temp_files.hpp"
#include "troupe/graph/formats/checkpoint_files.hpp"
#include "troupe/graph/formats/npz.hpp"

namespace troupe {
using testing::check_error;
using testing::TempDir;

namespace {

// `first`, first + 1, ... in a float tensor of `shape`.
Tensor counting(const TensorShape& shape, float first = 0) {
  Tensor t(DataType::kFloat, shape);
  std::iota(t.data<float>(), t.data<float>() + t.num_elements(), first);
  return t;
}

TensorSliceSpec spec(const std::string& text) {
  return value_or_throw(parse_tensor_slice_spec(text));
}

// A [5, 2] table 0..9 saved as rows 0-2 in shard 0 and rows 3-4 in shard 1, with a scalar
// "step" whole in shard 1.
std::string write_two_shards(const TempDir& dir) {
  const std::string prefix = dir.file("model-3");
  BOOST_REQUIRE(write_npz(checkpoint_shard_file(prefix, 0, 2),
                          {{checkpoint_slice_key("table", "5 2 0,3:-"), counting({3, 2})}})
                    .ok());
  BOOST_REQUIRE(write_npz(checkpoint_shard_file(prefix, 1, 2),
                          {{checkpoint_slice_key("table", "5 2 3,2:-"), counting({2, 2}, 6)},
                           {"step", Tensor(int64_t{3})}})
                    .ok());
  return prefix;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(checkpoint_files)

BOOST_AUTO_TEST_CASE(names_of_shards_slices_and_prefixes) {
  BOOST_TEST(checkpoint_shard_file("/d/model-7", 1, 12) == "/d/model-7.shard-00001-of-00012.npz");
  BOOST_TEST(checkpoint_slice_key("emb", "10 16 0,5:-") == "emb@10 16 0,5:-");
  BOOST_TEST(checkpoint_prefix_of("/d/model-7.shard-00001-of-00012.npz") == "/d/model-7");
  BOOST_TEST(checkpoint_prefix_of("/d/model-7.npz") == "/d/model-7");
  BOOST_TEST(checkpoint_prefix_of("/d/model-7") == "/d/model-7");
  BOOST_TEST(tensor_slice_spec_string({10, 16}, {0, 0}, {5, 16}) == "10 16 0,5:-");
  BOOST_TEST(tensor_slice_spec_string({10, 16}, {5, 8}, {5, 8}) == "10 16 5,5:8,8");
}

BOOST_AUTO_TEST_CASE(overlaps_of_blocks_are_copied_and_counted) {
  const Tensor rows = counting({2, 4});                // rows 1-2 of a [4, 4] tensor
  Tensor middle(DataType::kFloat, TensorShape{2, 2});  // rows 2-3, columns 1-2
  middle.data<float>()[2] = middle.data<float>()[3] = -1;
  BOOST_TEST(copy_overlap(rows, {1, 0}, middle, {2, 1}) == 2);
  BOOST_TEST(middle.to_vector<float>()[0] == 5.0f);  // row 2, column 1 of the whole
  BOOST_TEST(middle.to_vector<float>()[1] == 6.0f);
  BOOST_TEST(middle.to_vector<float>()[2] == -1.0f);  // row 3: not in `rows`
  BOOST_TEST(copy_overlap(rows, {1, 0}, middle, {3, 0}) == 0);
}

BOOST_AUTO_TEST_CASE(a_tensor_in_slices_over_two_shards_reads_whole_or_in_any_slice) {
  TempDir dir;
  const std::string prefix = write_two_shards(dir);
  auto files = value_or_throw(checkpoint_data_files(prefix));
  BOOST_REQUIRE(files.size() == 2u);
  BOOST_TEST(checkpoint_shown(files, prefix) == prefix);
  auto read = value_or_throw(read_checkpoint_tensors(
      prefix + ".shard-00001-of-00002.npz", {"table", "table", "step", "table"},
      {TensorSliceSpec{}, spec("5 2 2,2:-"), TensorSliceSpec{}, spec("5 2 1,4:1,1")}));
  BOOST_TEST(read[0].shape().to_string() == "[5,2]");
  BOOST_TEST(read[0].to_vector<float>() == counting({5, 2}).to_vector<float>(),
             boost::test_tools::per_element());
  BOOST_TEST(read[1].to_vector<float>() == (std::vector<float>{4, 5, 6, 7}),
             boost::test_tools::per_element());  // rows 2 and 3: one from each shard
  BOOST_TEST(read[2].to_vector<int64_t>() == std::vector<int64_t>{3});
  BOOST_TEST(read[3].to_vector<float>() == (std::vector<float>{3, 5, 7, 9}),
             boost::test_tools::per_element());
  auto all = value_or_throw(read_checkpoint(prefix));
  BOOST_REQUIRE(all.size() == 2u);
  BOOST_TEST(all[0].first == "step");
  BOOST_TEST(all[1].first == "table");
  BOOST_TEST(check_checkpoint_readable(prefix).ok());
}

BOOST_AUTO_TEST_CASE(one_archive_is_preferred_and_read_as_before) {
  TempDir dir;
  const std::string prefix = write_two_shards(dir);
  BOOST_REQUIRE(write_npz(prefix + ".npz", {{"table", counting({5, 2}, 100)}}).ok());
  auto files = value_or_throw(checkpoint_data_files(prefix));
  BOOST_REQUIRE(files.size() == 1u);
  BOOST_TEST(checkpoint_shown(files, prefix) == prefix + ".npz");
  auto read = value_or_throw(read_checkpoint_tensors(prefix, {"table"}, {spec("5 2 4,1:-")}));
  BOOST_TEST(read[0].to_vector<float>() == (std::vector<float>{108, 109}),
             boost::test_tools::per_element());
  BOOST_TEST(checkpoint_files_present(prefix).size() == 3u);
}

// A save under the same name in another layout or shard count, interrupted before it removed
// the older files: the layout written last is the checkpoint; an incomplete set never is.
BOOST_AUTO_TEST_CASE(of_two_complete_layouts_the_one_written_last_is_read) {
  TempDir dir;
  const std::string prefix = write_two_shards(dir);
  BOOST_REQUIRE(write_npz(prefix + ".npz", {{"table", counting({5, 2}, 100)}}).ok());
  const auto now = std::filesystem::file_time_type::clock::now();
  std::filesystem::last_write_time(prefix + ".npz", now - std::chrono::hours(1));
  auto files = value_or_throw(checkpoint_data_files(prefix));
  BOOST_TEST(files.size() == 2u);  // the shards, newer
  BOOST_REQUIRE(
      write_npz(checkpoint_shard_file(prefix, 0, 3), {{"step", Tensor(int64_t{3})}}).ok());
  BOOST_TEST(value_or_throw(checkpoint_data_files(prefix)).size() == 2u);  // 1 of 3: incomplete
  std::filesystem::last_write_time(checkpoint_shard_file(prefix, 0, 2),
                                   now - std::chrono::hours(2));
  std::filesystem::last_write_time(checkpoint_shard_file(prefix, 1, 2),
                                   now - std::chrono::hours(2));
  BOOST_TEST(value_or_throw(checkpoint_data_files(prefix)) ==
             std::vector<std::string>{prefix + ".npz"});
  BOOST_TEST(checkpoint_files_present(prefix).size() == 4u);
}

BOOST_AUTO_TEST_CASE(overlapping_slices_are_data_loss) {
  TempDir dir;
  const std::string prefix = dir.file("model-1");
  BOOST_REQUIRE(write_npz(checkpoint_shard_file(prefix, 0, 2),
                          {{checkpoint_slice_key("t", "4 0,3"), counting({3})}})
                    .ok());
  BOOST_REQUIRE(write_npz(checkpoint_shard_file(prefix, 1, 2),
                          {{checkpoint_slice_key("t", "4 2,1"), counting({1})}})
                    .ok());
  check_error(read_checkpoint_tensors(prefix, {"t"}, {TensorSliceSpec{}}).status(), Code::kDataLoss,
              "overlap");
}

BOOST_AUTO_TEST_CASE(a_missing_shard_key_or_slice_is_an_error_naming_it) {
  TempDir dir;
  const std::string prefix = write_two_shards(dir);
  check_error(read_checkpoint_tensors(prefix, {"bias"}, {TensorSliceSpec{}}).status(),
              Code::kNotFound, "Key bias not found in checkpoint '" + prefix + "'");
  check_error(read_checkpoint_tensors(prefix, {"table"}, {spec("6 2 0,1:-")}).status(),
              Code::kInvalidArgument, "the tensor's shape is [5,2], the slice is of a [6,2]");
  check_error(checkpoint_data_files(dir.file("model-4")).status(), Code::kNotFound,
              "neither " + dir.file("model-4") + ".npz nor its shards");

  // Rows 3-4 lost: what is asked of them cannot be assembled.
  std::filesystem::remove(checkpoint_shard_file(prefix, 1, 2));
  check_error(checkpoint_data_files(prefix).status(), Code::kDataLoss,
              "shard 1 of 2 (" + checkpoint_shard_file(prefix, 1, 2) + ") is missing");
  BOOST_TEST(checkpoint_files_present(prefix).size() == 1u);
  BOOST_REQUIRE(write_npz(checkpoint_shard_file(prefix, 1, 2),
                          {{checkpoint_slice_key("table", "5 2 3,1:-"), counting({1, 2})}})
                    .ok());
  check_error(read_checkpoint_tensors(prefix, {"table"}, {TensorSliceSpec{}}).status(),
              Code::kDataLoss, "its slices hold 8 of the 10 elements asked for");
  BOOST_TEST(read_checkpoint_tensors(prefix, {"table"}, {spec("5 2 0,4:-")}).ok());

  // Slices of two shapes of one name.
  BOOST_REQUIRE(write_npz(checkpoint_shard_file(prefix, 1, 2),
                          {{checkpoint_slice_key("table", "6 2 3,3:-"), counting({3, 2})}})
                    .ok());
  check_error(read_checkpoint_tensors(prefix, {"table"}, {TensorSliceSpec{}}).status(),
              Code::kDataLoss, "slices of 'table' disagree on its shape");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
