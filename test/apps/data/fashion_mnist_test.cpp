// Tests of the Fashion-MNIST loader and the sharded batch iterator (apps/data/fashion_mnist.hpp):
// the real files where Debian's dataset-fashion-mnist is installed, synthetic IDX files for
// every error, and sharding and shuffling on a small in-memory data set.
#include <unistd.h>
#include <zlib.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "status_checks.hpp"
#include "temp_files.hpp"
#include "troupe/apps/data/fashion_mnist.hpp"

namespace troupe {
using testing::read_file;
using testing::TempDir;
namespace {

namespace fs = std::filesystem;
using testing::check_error;

void put_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

// An IDX images file: magic, count, rows, cols, then `pixels` (by default (i * 7 + j) % 256
// for pixel j of image i).
std::string idx_images(uint32_t n, uint32_t rows = 28, uint32_t cols = 28,
                       uint32_t magic = 0x00000803) {
  std::string out;
  put_be32(out, magic);
  put_be32(out, n);
  put_be32(out, rows);
  put_be32(out, cols);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < rows * cols; ++j)
      out.push_back(static_cast<char>((i * 7 + j) % 256));
  }
  return out;
}

// An IDX labels file with labels i % 10.
std::string idx_labels(uint32_t n, uint32_t magic = 0x00000801) {
  std::string out;
  put_be32(out, magic);
  put_be32(out, n);
  for (uint32_t i = 0; i < n; ++i)
    out.push_back(static_cast<char>(i % 10));
  return out;
}

void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  BOOST_REQUIRE(f != nullptr);
  BOOST_REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
                static_cast<int>(bytes.size()));
  BOOST_REQUIRE(gzclose(f) == Z_OK);
}

void write_plain(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A data set of n examples of width 2 whose image i is [i, -i] and label i % 10.
Dataset numbered_dataset(int64_t n) {
  std::vector<float> images;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    images.push_back(static_cast<float>(i));
    images.push_back(-static_cast<float>(i));
    labels.push_back(i % 10);
  }
  return {value_or_throw(Tensor::from_vector<float>(images, {n, 2})),
          Tensor::from_vector<int64_t>(labels)};
}

// The example indices of one batch (from the first column of its images), checking that the
// labels and second column came with them.
std::vector<int64_t> batch_indices(const Tensor& images, const Tensor& labels) {
  std::vector<int64_t> out;
  for (int64_t b = 0; b < labels.dim(0); ++b) {
    auto index = static_cast<int64_t>(images.flat<float>()[b * 2]);
    BOOST_TEST(images.flat<float>()[b * 2 + 1] == -static_cast<float>(index));
    BOOST_TEST(labels.flat<int64_t>()[b] == index % 10);
    out.push_back(index);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fashion_mnist)

BOOST_AUTO_TEST_CASE(real_train_and_test_sets) {
  if (!fs::is_directory(kDefaultFashionMnistDir)) {
    BOOST_TEST_MESSAGE("skipped: no " << kDefaultFashionMnistDir
                                      << " (apt-get install dataset-fashion-mnist)");
    return;
  }
  struct Expected {
    bool train;
    int64_t size;
    std::vector<int64_t> first_labels;
  };
  for (const Expected& e :
       {Expected{true, 60000, {9, 0, 0, 3}}, Expected{false, 10000, {9, 2, 1, 1}}}) {
    BOOST_TEST_CONTEXT((e.train ? "train" : "test")) {
      auto data = load_fashion_mnist(kDefaultFashionMnistDir, e.train);
      BOOST_REQUIRE_MESSAGE(data.ok(), data.status().to_string());
      BOOST_TEST(data->size() == e.size);
      BOOST_TEST((data->images.shape() == TensorShape{e.size, 784}));
      BOOST_TEST((data->images.dtype() == DataType::kFloat));
      BOOST_TEST((data->labels.shape() == TensorShape{e.size}));
      BOOST_TEST((data->labels.dtype() == DataType::kInt64));
      auto labels = data->labels.flat<int64_t>();
      BOOST_TEST(std::vector<int64_t>(labels.begin(), labels.begin() + 4) == e.first_labels,
                 boost::test_tools::per_element());
      auto pixels = data->images.flat<float>();
      auto [lo, hi] = std::minmax_element(pixels.begin(), pixels.end());
      BOOST_TEST(*lo == 0.f);
      BOOST_TEST(*hi == 1.f);
      std::vector<int64_t> per_class(10);
      for (int64_t label : labels)
        per_class.at(label)++;
      for (int64_t count : per_class)
        BOOST_TEST(count == e.size / 10);  // balanced classes
    }
  }
}

BOOST_AUTO_TEST_CASE(synthetic_files_load) {
  TempDir dir;
  write_gz(dir.file("train-images-idx3-ubyte.gz"), idx_images(5));
  write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_labels(5));
  auto data = load_fashion_mnist(dir.path(), true);
  BOOST_REQUIRE_MESSAGE(data.ok(), data.status().to_string());
  BOOST_TEST(data->size() == 5);
  BOOST_TEST(data->labels.to_vector<int64_t>() == (std::vector<int64_t>{0, 1, 2, 3, 4}),
             boost::test_tools::per_element());
  auto pixels = data->images.flat<float>();
  BOOST_TEST(pixels[0] == 0.f);
  BOOST_TEST(pixels[1] == 1.f / 255);
  BOOST_TEST(pixels[255] == 1.f);
  BOOST_TEST(pixels[784 * 3 + 10] == static_cast<float>((3 * 7 + 10) % 256) / 255);

  // The test set is t10k-*, and unpacked files are used when the .gz are absent.
  check_error(load_fashion_mnist(dir.path(), false).status(), Code::kNotFound,
              "t10k-images-idx3-ubyte.gz");
  write_plain(dir.file("t10k-images-idx3-ubyte"), idx_images(3));
  write_plain(dir.file("t10k-labels-idx1-ubyte"), idx_labels(3));
  auto test = load_fashion_mnist(dir.path(), false);
  BOOST_REQUIRE_MESSAGE(test.ok(), test.status().to_string());
  BOOST_TEST(test->size() == 3);
}

BOOST_AUTO_TEST_CASE(missing_files_say_how_to_get_them) {
  TempDir dir;
  Status status = load_fashion_mnist(dir.file("nowhere"), true).status();
  check_error(status, Code::kNotFound, "sudo apt-get install dataset-fashion-mnist");
  check_error(status, Code::kNotFound, "--data_dir");
  check_error(status, Code::kNotFound, "train-images-idx3-ubyte.gz");
  write_gz(dir.file("train-images-idx3-ubyte.gz"), idx_images(2));
  check_error(load_fashion_mnist(dir.path(), true).status(), Code::kNotFound,
              "train-labels-idx1-ubyte.gz");
}

BOOST_AUTO_TEST_CASE(corrupt_files_are_data_loss_naming_the_file) {
  TempDir dir;
  const std::string images = dir.file("train-images-idx3-ubyte.gz");
  const std::string labels = dir.file("train-labels-idx1-ubyte.gz");
  auto load = [&] { return load_fashion_mnist(dir.path(), true).status(); };
  auto reset = [&] {
    write_gz(images, idx_images(4));
    write_gz(labels, idx_labels(4));
  };

  reset();
  write_gz(images, idx_images(4, 28, 28, 0x00000804));
  check_error(load(), Code::kDataLoss, images);
  check_error(load(), Code::kDataLoss, "magic number 0x00000804, expected 0x00000803");

  reset();
  write_gz(labels, idx_labels(4, 0x00000803));
  check_error(load(), Code::kDataLoss, labels);
  check_error(load(), Code::kDataLoss, "expected 0x00000801");

  reset();
  write_gz(images, idx_images(4, 27, 28));
  check_error(load(), Code::kDataLoss, "holds 27x28 images, expected 28x28");

  reset();
  write_gz(images, idx_images(5));
  check_error(load(), Code::kDataLoss, "holds 5 images but");
  check_error(load(), Code::kDataLoss, labels);

  reset();
  std::string bad_labels = idx_labels(4);
  bad_labels[8 + 2] = 11;
  write_gz(labels, bad_labels);
  check_error(load(), Code::kDataLoss, "label 11 of example 2 is outside 0..9");

  reset();
  std::string short_images = idx_images(4);
  short_images.resize(short_images.size() - 100);
  write_gz(images, short_images);
  check_error(load(), Code::kDataLoss, "truncated");
  check_error(load(), Code::kDataLoss, images);

  reset();
  write_gz(labels, idx_labels(4).substr(0, 6));
  check_error(load(), Code::kDataLoss, "truncated: it ends in the IDX header");

  reset();
  write_gz(labels, idx_labels(4) + "x");
  check_error(load(), Code::kDataLoss, "bytes after");

  // A cut gzip stream, and a corrupt one.
  reset();
  std::string gz = read_file(images);
  write_plain(images, gz.substr(0, gz.size() / 2));
  check_error(load(), Code::kDataLoss, images);
  reset();
  gz = read_file(images);
  gz[gz.size() - 6] ^= 0x55;  // the gzip trailer's CRC
  write_plain(images, gz);
  check_error(load(), Code::kDataLoss, images);

  reset();
  BOOST_TEST(load().ok());
}

BOOST_AUTO_TEST_CASE(shards_cover_every_example_once_per_epoch) {
  const int64_t n = 103;
  Dataset data = numbered_dataset(n);
  const int num_shards = 4, batch_size = 8;
  std::vector<int64_t> seen(n, 0);
  int64_t total = 0;
  for (int shard = 0; shard < num_shards; ++shard) {
    ShardedBatches batches =
        value_or_throw(ShardedBatches::create(data, shard, num_shards, batch_size, /*seed=*/17));
    const int64_t per_epoch = batches.examples_per_epoch();
    BOOST_TEST(per_epoch == (n - shard + num_shards - 1) / num_shards);
    total += per_epoch;
    // Draw three epochs' worth; check each epoch separately.
    std::vector<int64_t> drawn;
    int epochs_ended = 0;
    while (static_cast<int64_t>(drawn.size()) < 3 * per_epoch) {
      BOOST_TEST(batches.epoch() == static_cast<int64_t>(drawn.size()) / per_epoch);
      Tensor images, labels;
      bool ended = false;
      batches.next(&images, &labels, &ended);
      BOOST_REQUIRE(labels.dim(0) == batch_size);
      BOOST_REQUIRE((images.shape() == TensorShape{batch_size, 2}));
      auto indices = batch_indices(images, labels);
      size_t before = drawn.size();
      drawn.insert(drawn.end(), indices.begin(), indices.end());
      // A batch ends an epoch when it crosses (or reaches) a multiple of per_epoch.
      bool crossed = static_cast<int64_t>(before) / per_epoch !=
                     static_cast<int64_t>(drawn.size()) / per_epoch;
      BOOST_TEST(ended == crossed);
      epochs_ended += ended;
    }
    BOOST_TEST(epochs_ended >= 2);
    for (int epoch = 0; epoch < 3; ++epoch) {
      std::vector<int64_t> one(drawn.begin() + epoch * per_epoch,
                               drawn.begin() + (epoch + 1) * per_epoch);
      BOOST_TEST((one == batches.epoch_order(epoch)));
      std::sort(one.begin(), one.end());
      BOOST_TEST((std::adjacent_find(one.begin(), one.end()) == one.end()));  // no repeats
      for (int64_t i : one) {
        BOOST_TEST(i % num_shards == shard);
        if (epoch == 0) seen[i]++;
      }
    }
  }
  BOOST_TEST(total == n);
  BOOST_TEST(std::count(seen.begin(), seen.end(), 1) == n);
}

BOOST_AUTO_TEST_CASE(order_is_reproducible_and_reshuffled_each_epoch) {
  Dataset data = numbered_dataset(1000);
  ShardedBatches a = value_or_throw(ShardedBatches::create(data, 1, 3, 32, 2024));
  ShardedBatches b = value_or_throw(ShardedBatches::create(data, 1, 3, 32, 2024));
  ShardedBatches other = value_or_throw(ShardedBatches::create(data, 1, 3, 32, 2025));
  BOOST_TEST((a.epoch_order(0) == b.epoch_order(0)));
  BOOST_TEST((a.epoch_order(5) == b.epoch_order(5)));
  BOOST_TEST((a.epoch_order(0) != a.epoch_order(1)));
  BOOST_TEST((a.epoch_order(0) != other.epoch_order(0)));
  std::vector<int64_t> sorted = a.epoch_order(3);
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> shard;
  for (int64_t i = 1; i < 1000; i += 3)
    shard.push_back(i);
  BOOST_TEST((sorted == shard));
  BOOST_TEST((a.epoch_order(0) != shard));  // shuffled, not in file order
  for (int step = 0; step < 40; ++step) {   // across several epochs
    Tensor ai, al, bi, bl;
    a.next(&ai, &al);
    b.next(&bi, &bl);
    BOOST_REQUIRE(ai.equals(bi));
    BOOST_REQUIRE(al.equals(bl));
  }
  BOOST_TEST(a.epoch() == 3);  // 40 * 32 = 1280 examples of a 333-example shard
  // The order is fixed by the algorithm (seed_seq, mt19937_64, our own Fisher-Yates), not by
  // the standard library: this is what every platform gives.
  ShardedBatches small = value_or_throw(ShardedBatches::create(numbered_dataset(10), 0, 1, 1, 42));
  BOOST_TEST(small.epoch_order(0) == (std::vector<int64_t>{0, 6, 5, 1, 3, 9, 7, 8, 4, 2}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bad_arguments_are_invalid_argument) {
  Dataset data = numbered_dataset(10);
  check_error(ShardedBatches::create(data, 2, 2, 4, 0).status(), Code::kInvalidArgument,
              "shard_index 2 of num_shards 2");
  check_error(ShardedBatches::create(data, 0, 0, 4, 0).status(), Code::kInvalidArgument,
              "num_shards 0");
  check_error(ShardedBatches::create(data, 0, 1, 0, 0).status(), Code::kInvalidArgument,
              "batch_size 0");
  check_error(ShardedBatches::create(data, 11, 12, 1, 0).status(), Code::kInvalidArgument,
              "is empty");
  Dataset wrong{data.images, Tensor::from_vector<int32_t>({1, 2})};
  check_error(ShardedBatches::create(wrong, 0, 1, 1, 0).status(), Code::kInvalidArgument,
              "labels int64 [n]");
  // A batch larger than the shard spans epochs.
  ShardedBatches big = value_or_throw(ShardedBatches::create(data, 0, 1, 25, 7));
  Tensor images, labels;
  bool ended = false;
  big.next(&images, &labels, &ended);
  BOOST_TEST(ended);
  BOOST_TEST(big.epoch() == 2);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
