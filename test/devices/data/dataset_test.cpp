// Tests for tf.data's kernels on one CPU device: every source and transformation against
// TensorFlow 1.x's documented results, iterators (one-shot, initializable, the end as
// OutOfRange, use before initialisation), functions (map, filter, flat_map, interleave), and
// corrupt or missing files as typed errors naming the file, record and offset.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "devices/run_graph.hpp"
#include "troupe/graph/core/tfrecord.hpp"
#include "troupe/graph/graph_def_codec.hpp"

namespace troupe {
using testing::check_error;
using testing::run_graph;

namespace {

namespace fs = std::filesystem;

struct Pipeline {
  Scope root = Scope::new_root();
  Device device{"/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1};

  // Every element of `dataset` (of one int64 component), by a one-shot iterator.
  std::vector<std::vector<int64_t>> drain(Output dataset, int components = 1) {
    ops::DatasetShapes element{std::vector<DataType>(components, DataType::kInt64), {}};
    auto iterator = ops::OneShotIterator(root, dataset, element);
    auto next = ops::IteratorGetNext(root, iterator, element);
    std::vector<std::vector<int64_t>> out;
    for (int i = 0; i < 1000; ++i) {
      auto got = run_graph(root, next, {}, {}, &device);
      if (!got.ok()) {
        BOOST_TEST(got.status().code() == Code::kOutOfRange, got.status().to_string());
        return out;
      }
      std::vector<int64_t> values;
      for (const Tensor& t : *got)
        for (int64_t v : t.flat<int64_t>())
          values.push_back(v);
      out.push_back(values);
    }
    BOOST_FAIL("no end of sequence after 1000 elements");
    return out;
  }
};

Output range(const Scope& s, int64_t start, int64_t stop, int64_t step = 1) {
  return ops::RangeDataset(s, start, stop, step);
}

std::vector<std::vector<int64_t>> rows(std::initializer_list<std::vector<int64_t>> r) {
  return r;
}

// Argument `index` (an int64) of a function graph.
Output int64_arg(const Scope& function, const char* name, int index) {
  return Output(NodeBuilder(function.with_op_name(name), "_Arg")
                    .attr("T", DataType::kInt64)
                    .attr("index", index)
                    .finalize(),
                0);
}

std::string serialized(const Scope& function) {
  auto words = serialize_graph_def(function.graph().to_graph_def());
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() /
         ("troupe_dataset_test_" + std::to_string(::getpid()) + "_" + name);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(datasets)

BOOST_AUTO_TEST_CASE(range_batch_and_drop_remainder) {
  Pipeline p;
  BOOST_TEST(p.drain(ops::BatchDataset(p.root, range(p.root, 0, 10), int64_t{4}, false)) ==
             rows({{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  BOOST_TEST(p.drain(ops::BatchDataset(p.root, range(p.root, 0, 10), int64_t{4}, true)) ==
             rows({{0, 1, 2, 3}, {4, 5, 6, 7}}));
  BOOST_TEST(p.drain(range(p.root, 5, 0, -2)) == rows({{5}, {3}, {1}}));
  BOOST_TEST(p.drain(range(p.root, 0, 0)).empty());
}

BOOST_AUTO_TEST_CASE(repeat_take_skip_shard_zip_concatenate) {
  Pipeline p;
  auto three = range(p.root, 0, 3);
  BOOST_TEST(p.drain(ops::RepeatDataset(p.root, three, int64_t{2})) ==
             rows({{0}, {1}, {2}, {0}, {1}, {2}}));
  BOOST_TEST(p.drain(ops::TakeDataset(p.root, ops::RepeatDataset(p.root, three, int64_t{-1}),
                                      int64_t{4})) == rows({{0}, {1}, {2}, {0}}));
  // An empty dataset repeated forever is empty, not an endless loop.
  BOOST_TEST(p.drain(ops::RepeatDataset(p.root, range(p.root, 0, 0), int64_t{-1})).empty());
  BOOST_TEST(p.drain(ops::SkipDataset(p.root, three, int64_t{2})) == rows({{2}}));
  BOOST_TEST(p.drain(ops::SkipDataset(p.root, three, int64_t{-1})).empty());
  BOOST_TEST(p.drain(ops::ShardDataset(p.root, range(p.root, 0, 10), int64_t{3}, int64_t{1})) ==
             rows({{1}, {4}, {7}}));
  BOOST_TEST(p.drain(ops::ZipDataset(p.root, three, range(p.root, 10, 20)), 2) ==
             rows({{0, 10}, {1, 11}, {2, 12}}));
  BOOST_TEST(p.drain(ops::ConcatenateDataset(p.root, three, range(p.root, 7, 9))) ==
             rows({{0}, {1}, {2}, {7}, {8}}));
}

BOOST_AUTO_TEST_CASE(tensor_slices_and_tensors) {
  Pipeline p;
  auto matrix = ops::Const(
      p.root, Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, TensorShape{3, 2}).value());
  BOOST_TEST(p.drain(ops::TensorSliceDataset(p.root, {matrix})) == rows({{1, 2}, {3, 4}, {5, 6}}));
  BOOST_TEST(p.drain(ops::TensorDataset(p.root, {matrix})) == rows({{1, 2, 3, 4, 5, 6}}));
  auto short_column = ops::Const(p.root, Tensor::from_vector<int64_t>({1, 2}));
  auto bad = ops::TensorSliceDataset(p.root, {matrix, short_column});
  ops::DatasetShapes element{{DataType::kInt64, DataType::kInt64}, {}};
  auto next = ops::IteratorGetNext(p.root, ops::OneShotIterator(p.root, bad, element), element);
  check_error(run_graph(p.root, next, {}, {}, &p.device).status(), Code::kInvalidArgument,
              "same first dimension");
}

BOOST_AUTO_TEST_CASE(shuffle_is_a_permutation_fixed_by_its_seeds) {
  Pipeline p;
  auto shuffled = [&](int64_t seed) {
    return p.drain(ops::ShuffleDataset(p.root, range(p.root, 0, 20), int64_t{5}, seed, int64_t{7}));
  };
  auto a = shuffled(1), b = shuffled(1), c = shuffled(2);
  BOOST_TEST(a == b);
  BOOST_TEST(a != c);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  BOOST_TEST(sorted == p.drain(range(p.root, 0, 20)));
  BOOST_TEST(a != sorted);
  // Reshuffled each pass of a repeat; the same order each pass without.
  auto passes = [&](bool reshuffle) {
    auto d = ops::ShuffleDataset(p.root, range(p.root, 0, 20), int64_t{20}, int64_t{3}, int64_t{4},
                                 reshuffle);
    auto all = p.drain(ops::RepeatDataset(p.root, d, int64_t{2}));
    return std::pair(std::vector(all.begin(), all.begin() + 20),
                     std::vector(all.begin() + 20, all.end()));
  };
  auto [first, second] = passes(true);
  BOOST_TEST(first != second);
  auto [same_first, same_second] = passes(false);
  BOOST_TEST(same_first == same_second);
}

BOOST_AUTO_TEST_CASE(prefetch_yields_the_same_sequence) {
  Pipeline p;
  auto source = ops::BatchDataset(p.root, range(p.root, 0, 50), int64_t{7}, false);
  BOOST_TEST(p.drain(ops::PrefetchDataset(p.root, source, int64_t{3})) == p.drain(source));
  BOOST_TEST(p.drain(ops::PrefetchDataset(p.root, source, int64_t{-1})) == p.drain(source));
}

BOOST_AUTO_TEST_CASE(map_and_filter_run_graph_functions) {
  Pipeline p;
  // f(x, k) = x * k, with k captured from the outer graph.
  Scope f = Scope::new_root();
  Output x = int64_arg(f, "x", 0);
  Output k = int64_arg(f, "k", 1);
  NodeBuilder(f.with_op_name("out"), "_Retval")
      .input(ops::Mul(f, x, k))
      .attr("T", DataType::kInt64)
      .attr("index", 0)
      .finalize();
  BOOST_REQUIRE(f.ok());
  auto mapped = ops::MapDataset(p.root, range(p.root, 0, 4), {Input(int64_t{10})}, serialized(f),
                                {{DataType::kInt64}, {}});
  BOOST_TEST(p.drain(mapped) == rows({{0}, {10}, {20}, {30}}));

  // keep(x) = x > 1
  Scope g = Scope::new_root();
  Output y = int64_arg(g, "y", 0);
  NodeBuilder(g.with_op_name("keep"), "_Retval")
      .input(ops::Greater(g, y, int64_t{1}))
      .attr("T", DataType::kBool)
      .attr("index", 0)
      .finalize();
  BOOST_REQUIRE(g.ok());
  BOOST_TEST(p.drain(ops::FilterDataset(p.root, range(p.root, 0, 4), {}, serialized(g))) ==
             rows({{2}, {3}}));

  // A function that is not a graph fails when the kernel is built, naming the node.
  auto broken = ops::MapDataset(p.root.with_op_name("broken_map"), range(p.root, 0, 4), {},
                                "not a graph", {{DataType::kInt64}, {}});
  ops::DatasetShapes element{{DataType::kInt64}, {}};
  auto next = ops::IteratorGetNext(p.root, ops::OneShotIterator(p.root, broken, element), element);
  check_error(run_graph(p.root, next, {}, {}, &p.device).status(), Code::kInvalidArgument,
              "broken_map");
}

BOOST_AUTO_TEST_CASE(flat_map_and_interleave_open_the_dataset_a_function_returns) {
  Pipeline p;
  // f(x) = range(0, x): a dataset, returned by reference.
  Scope f = Scope::new_root();
  Output x = int64_arg(f, "x", 0);
  NodeBuilder(f.with_op_name("out"), "_RetvalRef")
      .input(ops::RangeDataset(f, int64_t{0}, x, int64_t{1}))
      .attr("T", DataType::kString)
      .attr("index", 0)
      .finalize();
  BOOST_REQUIRE_MESSAGE(f.ok(), f.status().to_string());
  const ops::DatasetShapes element{{DataType::kInt64}, {}};
  BOOST_TEST(p.drain(ops::FlatMapDataset(p.root, range(p.root, 1, 4), {}, serialized(f),
                                         element)) == rows({{0}, {0}, {1}, {0}, {1}, {2}}));
  // Two open at a time, two elements from each in turn; a finished one's slot opens the next
  // input at its next turn (TensorFlow's order).
  auto interleaved = ops::InterleaveDataset(p.root, range(p.root, 3, 6), {}, int64_t{2}, int64_t{2},
                                            serialized(f), element);
  BOOST_TEST(p.drain(interleaved) ==
             rows({{0}, {1}, {0}, {1}, {2}, {2}, {3}, {0}, {1}, {2}, {3}, {4}}));

  // A function that returns a tensor, not a dataset, fails naming the node.
  Scope g = Scope::new_root();
  Output y = int64_arg(g, "y", 0);
  NodeBuilder(g.with_op_name("out"), "_Retval")
      .input(y)
      .attr("T", DataType::kInt64)
      .attr("index", 0)
      .finalize();
  auto wrong = ops::FlatMapDataset(p.root.with_op_name("not_a_dataset"), range(p.root, 0, 2), {},
                                   serialized(g), element);
  auto next = ops::IteratorGetNext(p.root, ops::OneShotIterator(p.root, wrong, element), element);
  check_error(run_graph(p.root, next, {}, {}, &p.device).status(), Code::kInvalidArgument,
              "not_a_dataset");
  auto zero_cycle = ops::InterleaveDataset(p.root.with_op_name("zero_cycle"), range(p.root, 0, 2),
                                           {}, int64_t{0}, int64_t{1}, serialized(f), element);
  next = ops::IteratorGetNext(p.root, ops::OneShotIterator(p.root, zero_cycle, element), element);
  check_error(run_graph(p.root, next, {}, {}, &p.device).status(), Code::kInvalidArgument,
              "cycle_length must be greater than zero");
}

BOOST_AUTO_TEST_CASE(initializable_iterator_restarts_and_checks_types) {
  Pipeline p;
  ops::DatasetShapes element{{DataType::kInt64}, {PartialShape::scalar()}};
  auto iterator = ops::Iterator(p.root.with_op_name("it"), element);
  auto next = ops::IteratorGetNext(p.root, iterator, element);
  check_error(run_graph(p.root, next, {}, {}, &p.device).status(), Code::kFailedPrecondition,
              "has not been initialized");
  auto init = ops::MakeIterator(p.root, range(p.root, 0, 2), iterator);
  for (int pass = 0; pass < 2; ++pass) {
    BOOST_REQUIRE(run_graph(p.root, {}, {}, {init}, &p.device).ok());
    BOOST_TEST(run_graph(p.root, next, {}, {}, &p.device)->at(0).scalar<int64_t>() == 0);
    BOOST_TEST(run_graph(p.root, next, {}, {}, &p.device)->at(0).scalar<int64_t>() == 1);
    check_error(run_graph(p.root, next, {}, {}, &p.device).status(), Code::kOutOfRange,
                "End of sequence");
  }
  auto floats = ops::TensorSliceDataset(p.root, {ops::Const(p.root, {1.f, 2.f})});
  check_error(
      run_graph(p.root, {}, {}, {ops::MakeIterator(p.root, floats, iterator)}, &p.device).status(),
      Code::kInvalidArgument, "iterator 'it' yields elements of types [int64]");
  // A declared shape the elements do not have.
  auto batched = ops::BatchDataset(p.root, range(p.root, 0, 4), int64_t{2}, false);
  BOOST_REQUIRE(
      run_graph(p.root, {}, {}, {ops::MakeIterator(p.root, batched, iterator)}, &p.device).ok());
  check_error(run_graph(p.root, next, {}, {}, &p.device).status(), Code::kInvalidArgument,
              "component 0 has shape [2], declared []");
}

BOOST_AUTO_TEST_CASE(bad_arguments_name_the_node) {
  Pipeline p;
  auto expect = [&](Output dataset, const std::string& message) {
    ops::DatasetShapes element{{DataType::kInt64}, {}};
    auto next =
        ops::IteratorGetNext(p.root, ops::OneShotIterator(p.root, dataset, element), element);
    check_error(run_graph(p.root, next, {}, {}, &p.device).status(), Code::kInvalidArgument,
                message);
  };
  expect(ops::BatchDataset(p.root.with_op_name("b"), range(p.root, 0, 3), int64_t{0}, false),
         "node 'b' (BatchDatasetV2): batch_size must be greater than zero, got 0");
  expect(ops::RangeDataset(p.root.with_op_name("r"), int64_t{0}, int64_t{3}, int64_t{0}),
         "node 'r' (RangeDataset): step must be a non-zero integer");
  expect(ops::ShardDataset(p.root.with_op_name("s"), range(p.root, 0, 3), int64_t{2}, int64_t{2}),
         "index must be between 0 and 1, got 2");
  expect(ops::ShuffleDataset(p.root.with_op_name("sh"), range(p.root, 0, 3), int64_t{0}, int64_t{1},
                             int64_t{1}),
         "buffer_size must be greater than zero");
}

BOOST_AUTO_TEST_CASE(record_files_and_their_corruption) {
  Pipeline p;
  fs::path records = temp_file("records.tfrecord");
  {
    std::ofstream out(records, std::ios::binary);
    for (const char* r : {"alpha", "", "gamma"})
      out << tfrecord_frame(r);
  }
  fs::path lines = temp_file("lines.txt");
  std::ofstream(lines, std::ios::binary) << "one\r\ntwo\n\nthree";
  fs::path fixed = temp_file("fixed.bin");
  std::ofstream(fixed, std::ios::binary) << "HHaabbccdF";  // header 2, records 2, footer 1

  auto strings = [&](Output dataset) {
    ops::DatasetShapes element{{DataType::kString}, {PartialShape::scalar()}};
    auto next =
        ops::IteratorGetNext(p.root, ops::OneShotIterator(p.root, dataset, element), element);
    std::vector<std::string> out;
    for (;;) {
      auto got = run_graph(p.root, next, {}, {}, &p.device);
      if (!got.ok()) {
        BOOST_TEST(got.status().code() == Code::kOutOfRange, got.status().to_string());
        return out;
      }
      out.push_back(got->at(0).scalar<std::string>());
    }
  };
  auto names =
      ops::Const(p.root, Tensor::from_vector<std::string>({records.string(), records.string()}));
  BOOST_TEST(strings(ops::TFRecordDataset(p.root, names)) ==
             std::vector<std::string>({"alpha", "", "gamma", "alpha", "", "gamma"}));
  BOOST_TEST(strings(ops::TextLineDataset(p.root, lines.string())) ==
             std::vector<std::string>({"one", "two", "", "three"}));
  BOOST_TEST(strings(ops::FixedLengthRecordDataset(p.root, fixed.string(), int64_t{2}, int64_t{2},
                                                   int64_t{1})) ==
             std::vector<std::string>({"aa", "bb", "cc"}));

  // A flipped byte in the second record's data: DataLoss naming the file, record and offset.
  {
    std::fstream f(records, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(37 + 12 + 1);  // records 0 (5 bytes) and 1 (empty) end at 37; into 2's data
    f.put('X');
  }
  ops::DatasetShapes element{{DataType::kString}, {}};
  auto next = ops::IteratorGetNext(
      p.root, ops::OneShotIterator(p.root, ops::TFRecordDataset(p.root, records.string()), element),
      element);
  BOOST_REQUIRE(run_graph(p.root, next, {}, {}, &p.device).ok());
  BOOST_REQUIRE(run_graph(p.root, next, {}, {}, &p.device).ok());
  check_error(
      run_graph(p.root, next, {}, {}, &p.device).status(), Code::kDataLoss,
      fmt::format("TFRecord file '{}': record 2 at offset 37 has corrupt data", records.string()));
  // Cut in the middle of a record.
  fs::resize_file(records, 12 + 5 + 4 + 6);
  auto cut = ops::IteratorGetNext(
      p.root, ops::OneShotIterator(p.root, ops::TFRecordDataset(p.root, records.string()), element),
      element);
  BOOST_REQUIRE(run_graph(p.root, cut, {}, {}, &p.device).ok());
  check_error(run_graph(p.root, cut, {}, {}, &p.device).status(), Code::kDataLoss,
              "record 1 at offset 21 is truncated");
  auto missing = ops::IteratorGetNext(
      p.root,
      ops::OneShotIterator(p.root, ops::TFRecordDataset(p.root, "/nonexistent/x.tfrecord"),
                           element),
      element);
  check_error(run_graph(p.root, missing, {}, {}, &p.device).status(), Code::kNotFound,
              "/nonexistent/x.tfrecord");
  auto gzip = NodeBuilder(p.root.with_op_name("gz"), "TFRecordDataset")
                  .input(Input(records.string()))
                  .input(Input("GZIP"))
                  .input(Input(int64_t{0}))
                  .finalize();
  auto gz_next = ops::IteratorGetNext(p.root, ops::OneShotIterator(p.root, gzip, element), element);
  // Read as GZIP, an uncompressed file is not a GZIP stream (tfrecord_test reads real ones).
  check_error(run_graph(p.root, gz_next, {}, {}, &p.device).status(), Code::kDataLoss,
              "is not a valid GZIP stream");
  fs::remove(records);
  fs::remove(lines);
  fs::remove(fixed);
}

BOOST_AUTO_TEST_CASE(crc32c_known_answers) {
  // RFC 3720's test vectors (iSCSI, B.4), as LevelDB's crc32c tests use them.
  std::string zeros(32, '\0'), ones(32, '\xff'), ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  BOOST_TEST(crc32c(zeros.data(), zeros.size()) == 0x8a9136aaU);
  BOOST_TEST(crc32c(ones.data(), ones.size()) == 0x62a8ab43U);
  BOOST_TEST(crc32c(ascending.data(), ascending.size()) == 0x46dd794eU);
  BOOST_TEST(crc32c(descending.data(), descending.size()) == 0x113fdb5cU);
  BOOST_TEST(crc32c("hello ", 6, crc32c("", 0)) == crc32c("hello ", 6));
  BOOST_TEST(unmask_crc32c(mask_crc32c(0x12345678U)) == 0x12345678U);
  // The instruction and the table agree on every length and alignment.
  std::string bytes;
  for (int i = 0; i < 300; ++i)
    bytes.push_back(static_cast<char>(i * 31 + 7));
  for (size_t begin = 0; begin < 9; ++begin) {
    for (size_t size = 0; begin + size <= bytes.size(); size += 13) {
      BOOST_TEST(crc32c(bytes.data() + begin, size, 5) ==
                 crc32c_portable(bytes.data() + begin, size, 5));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
