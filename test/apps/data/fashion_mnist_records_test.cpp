// Tests of Fashion-MNIST as TFRecord files (apps/data/fashion_mnist_records.hpp): a round trip
// of a small data set through sharded files, the records' format (TensorFlow's
// convert_to_records.py), the errors for missing or mixed shards and foreign or older records, and,
// where Debian's dataset-fashion-mnist is installed, `troupe data` then `troupe train
// --data=tfrecord:DIR` as a user runs them.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "apps/child_process.hpp"
#include "status_checks.hpp"
#include "temp_files.hpp"
#include "troupe/apps/data/fashion_mnist_records.hpp"
#include "troupe/devices/cpu/example_proto.hpp"
#include "troupe/graph/core/protobuf_wire.hpp"
#include "troupe/graph/core/tfrecord.hpp"

namespace troupe {
using testing::check_error;
using testing::run_process;
using testing::TempDir;

namespace {

namespace fs = std::filesystem;

// n examples: pixel j of image i is ((i * 7 + j) % 256) / 255, label i % 10.
Dataset small_dataset(int64_t n) {
  Dataset data;
  data.images = Tensor(DataType::kFloat, TensorShape{n, kFashionMnistPixels});
  data.labels = Tensor(DataType::kInt64, TensorShape{n});
  for (int64_t i = 0; i < n; ++i) {
    for (int j = 0; j < kFashionMnistPixels; ++j) {
      data.images.data<float>()[i * kFashionMnistPixels + j] =
          static_cast<float>((i * 7 + j) % 256) / 255.0f;
    }
    data.labels.data<int64_t>()[i] = i % 10;
  }
  return data;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fashion_mnist_records)

BOOST_AUTO_TEST_CASE(round_trip_through_sharded_files) {
  TempDir dir;
  Dataset data = small_dataset(11);
  auto files = write_fashion_mnist_records(data, dir.path().string(), "test", 3);
  BOOST_REQUIRE_MESSAGE(files.ok(), files.status().to_string());
  BOOST_TEST(files->size() == 3u);
  BOOST_TEST(fs::path(files->at(1)).filename() == "test-00001-of-00003.tfrecord");
  auto found = fashion_mnist_record_files(dir.path().string(), "test");
  BOOST_REQUIRE(found.ok());
  BOOST_TEST(*found == *files);
  BOOST_TEST(*count_records(*files) == 11);
  auto back = read_fashion_mnist_records(dir.path().string(), "test");
  BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  BOOST_TEST(back->images.equals(data.images));
  BOOST_TEST(back->labels.equals(data.labels));
}

BOOST_AUTO_TEST_CASE(missing_mixed_and_foreign_files_are_errors) {
  TempDir dir;
  check_error(fashion_mnist_record_files(dir.path().string(), "train").status(), Code::kNotFound,
              "troupe data fashion-mnist --to=" + dir.path().string());
  check_error(
      write_fashion_mnist_records(small_dataset(2), dir.path().string(), "valid", 1).status(),
      Code::kInvalidArgument, "split 'valid': expected train or test");
  BOOST_REQUIRE(
      write_fashion_mnist_records(small_dataset(5), dir.path().string(), "train", 2).ok());
  BOOST_REQUIRE(
      write_fashion_mnist_records(small_dataset(5), dir.path().string(), "train", 3).ok());
  check_error(fashion_mnist_record_files(dir.path().string(), "train").status(),
              Code::kFailedPrecondition, "come from two writes");
  TempDir other;
  {
    std::ofstream out(fs::path(other.path().string()) / "test-00000-of-00001.tfrecord",
                      std::ios::binary);
    out << tfrecord_frame("not an example");
  }
  check_error(read_fashion_mnist_records(other.path().string(), "test").status(), Code::kDataLoss,
              "test-00000-of-00001.tfrecord' record 0");
  check_error(fashion_mnist_record_files(other.path().string(), "test").status(), Code::kDataLoss,
              "test-00000-of-00001.tfrecord' record 0");

  // Records of the int64 "image" feature troupe wrote before are refused, saying what to do.
  TempDir older;
  {
    std::string list, feature, entry, features, example;
    proto::put_packed_ints(list, 1, std::vector<int64_t>(kFashionMnistPixels, 7));
    proto::put_bytes(feature, 3, list);
    proto::put_bytes(entry, 1, "image");
    proto::put_bytes(entry, 2, feature);
    proto::put_bytes(features, 1, entry);
    proto::put_bytes(example, 1, features);
    std::ofstream out(fs::path(older.path().string()) / "train-00000-of-00001.tfrecord",
                      std::ios::binary);
    out << tfrecord_frame(example);
  }
  check_error(fashion_mnist_record_files(older.path().string(), "train").status(),
              Code::kFailedPrecondition, "troupe data fashion-mnist --to=DIR");
}

BOOST_AUTO_TEST_CASE(records_are_those_of_tensorflows_convert_to_records) {
  TempDir dir;
  Dataset data = small_dataset(2);
  auto files = write_fashion_mnist_records(data, dir.path().string(), "train", 1);
  BOOST_REQUIRE(files.ok());
  auto reader = TFRecordReader::open(files->front());
  BOOST_REQUIRE(reader.ok());
  std::string record;
  bool end = false;
  BOOST_REQUIRE(reader->read(&record, &end).ok());
  BOOST_REQUIRE(reader->read(&record, &end).ok());  // example 1
  auto features = decode_example(record, "example 1");
  BOOST_REQUIRE_MESSAGE(features.ok(), features.status().to_string());
  BOOST_TEST(features->size() == 5u);
  for (auto [key, value] :
       {std::pair<std::string, int64_t>{"height", 28}, {"width", 28}, {"depth", 1}, {"label", 1}}) {
    BOOST_TEST_CONTEXT(key) {
      BOOST_REQUIRE(features->count(key) == 1u);
      BOOST_TEST(features->at(key).ints == std::vector<int64_t>{value});
    }
  }
  const auto& image = features->at("image_raw").bytes;
  BOOST_REQUIRE(image.size() == 1u);
  BOOST_REQUIRE(image[0].size() == size_t{kFashionMnistPixels});
  for (int j = 0; j < kFashionMnistPixels; ++j)
    BOOST_TEST(static_cast<uint8_t>(image[0][j]) == (7 + j) % 256);
}

BOOST_AUTO_TEST_CASE(troupe_trains_from_the_records_troupe_data_writes) {
  if (!fs::is_directory(kDefaultFashionMnistDir)) {
    BOOST_TEST_MESSAGE("skipped: no " << kDefaultFashionMnistDir
                                      << " (apt-get install dataset-fashion-mnist)");
    return;
  }
  TempDir dir;
  std::string records = dir.path().string() + "/records";
  auto wrote =
      run_process({TROUPE_CLI, "data", "fashion-mnist", "--to=" + records, "--shards=2"}, 120000);
  BOOST_TEST_REQUIRE(wrote.exit_code == 0, wrote.out);
  BOOST_TEST(wrote.out.find("60000 train examples in 2 files") != std::string::npos, wrote.out);
  auto trained =
      run_process({TROUPE_CLI, "train", "--data=tfrecord:" + records, "--epochs=1",
                   "--checkpoint_dir=" + dir.path().string() + "/logs", "--log_every=1000"},
                  300000);
  BOOST_TEST_REQUIRE(trained.exit_code == 0, trained.out);
  auto at = trained.out.find("test accuracy ");
  BOOST_TEST_REQUIRE(at != std::string::npos, trained.out);
  double accuracy = std::stod(trained.out.substr(at + 14));
  BOOST_TEST(accuracy > 0.80, trained.out);  // the in-memory job reaches 0.83-0.84 in one epoch
  auto bad = run_process({TROUPE_CLI, "train", "--data=csv:" + records}, 60000);
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(bad.out.find("--data=csv:") != std::string::npos, bad.out);
  auto usage = run_process({TROUPE_CLI, "data", "mnist", "--to=" + records}, 60000);
  BOOST_TEST(usage.exit_code == 2);
  BOOST_TEST(usage.out.find("troupe data fashion-mnist --to=DIR") != std::string::npos, usage.out);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
