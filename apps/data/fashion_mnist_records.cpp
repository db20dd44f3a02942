// Fashion-MNIST as TFRecord files of Examples: writing, finding, reading back, and the tf.data
// pipeline that trains from them.
#include "troupe/apps/data/fashion_mnist_records.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <unistd.h>

#include <capnp/common.h>
#include <fmt/format.h>

#include "troupe/devices/cpu/example_proto.hpp"
#include "troupe/graph/core/check.hpp"
#include "troupe/graph/core/protobuf_wire.hpp"
#include "troupe/graph/core/tfrecord.hpp"
#include "troupe/graph/formats/file_io.hpp"
#include "troupe/graph/graph_def_codec.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

namespace fs = std::filesystem;

// Features.feature entry `key` holding `list` (a BytesList, 1, or an Int64List, 3).
void put_feature(std::string& features, std::string_view key, uint32_t kind,
                 const std::string& list) {
  std::string feature, entry;
  proto::put_bytes(feature, kind, list);
  proto::put_bytes(entry, 1, key);
  proto::put_bytes(entry, 2, feature);
  proto::put_bytes(features, 1, entry);
}

void put_int64_feature(std::string& features, std::string_view key, int64_t value) {
  std::string list;
  proto::put_packed_ints(list, 1, {value});
  put_feature(features, key, 3, list);
}

// The Example of TensorFlow's convert_to_records.py (its keys in its order).
std::string encode_example(const float* pixels, int64_t label) {
  std::string image_raw(kFashionMnistPixels, '\0');
  for (int i = 0; i < kFashionMnistPixels; ++i)
    image_raw[i] = static_cast<char>(std::lround(pixels[i] * 255.0f));
  std::string features, example, bytes_list;
  put_int64_feature(features, "height", kFashionMnistImageSize);
  put_int64_feature(features, "width", kFashionMnistImageSize);
  put_int64_feature(features, "depth", 1);
  put_int64_feature(features, "label", label);
  proto::put_bytes(bytes_list, 1, image_raw);
  put_feature(features, "image_raw", 1, bytes_list);
  proto::put_bytes(example, 1, features);
  return example;
}

Status check_split(const std::string& split) {
  if (split == "train" || split == "test") return Status::OK();
  return errors::InvalidArgument("split '{}': expected train or test", split);
}

// OK for an Example as encode_example writes it; FailedPrecondition for one of the int64
// "image" feature that troupe wrote before it wrote TensorFlow's format; DataLoss otherwise.
Status check_example(const std::map<std::string, ExampleFeature, std::less<>>& features,
                     const std::string& what) {
  auto image = features.find("image_raw");
  auto label = features.find("label");
  if (image == features.end() && features.count("image") != 0) {
    return errors::FailedPrecondition(
        "{}: an Example of the int64 feature 'image' that earlier versions of troupe wrote; "
        "troupe now reads TensorFlow's format (bytes 'image_raw', int64 'label'): write the "
        "records again with `troupe data fashion-mnist --to=DIR`",
        what);
  }
  if (image == features.end() || image->second.bytes.size() != 1 ||
      image->second.bytes[0].size() != kFashionMnistPixels || label == features.end() ||
      label->second.ints.size() != 1 || label->second.ints[0] < 0 ||
      label->second.ints[0] >= kFashionMnistClasses) {
    return errors::DataLoss(
        "{}: not a Fashion-MNIST Example (expected the bytes feature image_raw, of {} pixels, "
        "and the int64 feature label, in 0..9)",
        what, kFashionMnistPixels);
  }
  return Status::OK();
}

// Checks the first record of `file` with check_example: records of another kind are found
// before a pipeline is built on them.
Status check_first_record(const std::string& file) {
  TROUPE_ASSIGN_OR_RETURN(TFRecordReader reader, TFRecordReader::open(file));
  std::string record;
  bool end = false;
  TROUPE_RETURN_IF_ERROR(reader.read(&record, &end));
  if (end) return Status::OK();
  std::string what = fmt::format("'{}' record 0", file);
  TROUPE_ASSIGN_OR_RETURN(auto features, decode_example(record, what));
  return check_example(features, what);
}

std::string shard_name(const std::string& split, int i, int n) {
  return fmt::format("{}-{:05d}-of-{:05d}.tfrecord", split, i, n);
}

// The serialized function the pipeline maps over batches of records: ParseExample, then the
// pixels decoded as uint8 and scaled to floats in [0, 1] (as load_fashion_mnist scales them).
std::string parse_batch_function() {
  Scope f = Scope::new_root();
  Output records = NodeBuilder(f.with_op_name("records"), "_Arg")
                       .attr("T", DataType::kString)
                       .attr("index", 0)
                       .attr("shape", PartialShape{-1})
                       .finalize();
  auto parsed = ops::ParseExample(f, records, {}, {}, {"image_raw", "label"},
                                  {Input(Tensor(DataType::kString, TensorShape{0})),
                                   Input(Tensor(DataType::kInt64, TensorShape{0}))},
                                  {PartialShape::scalar(), PartialShape::scalar()});
  auto pixels = ops::Reshape(f, ops::DecodeRaw(f, parsed.dense_values[0], DataType::kUint8),
                             Tensor::from_vector<int32_t>({-1, kFashionMnistPixels}));
  auto images = ops::Div(f, ops::Cast(f, pixels, DataType::kFloat), 255.0f);
  NodeBuilder(f.with_op_name("images"), "_Retval")
      .input(images)
      .attr("T", DataType::kFloat)
      .attr("index", 0)
      .finalize();
  NodeBuilder(f.with_op_name("labels"), "_Retval")
      .input(parsed.dense_values[1])
      .attr("T", DataType::kInt64)
      .attr("index", 1)
      .finalize();
  TROUPE_CHECK_OK(f.status());
  auto words = serialize_graph_def(f.graph().to_graph_def());
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

}  // namespace

StatusOr<std::vector<std::string>> write_fashion_mnist_records(const Dataset& data,
                                                               const std::string& dir,
                                                               const std::string& split,
                                                               int shards) {
  TROUPE_RETURN_IF_ERROR(check_split(split));
  if (shards < 1) return errors::InvalidArgument("--shards={}: expected 1 or more", shards);
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return errors::PermissionDenied("cannot create directory '{}': {}", dir, error.message());
  }
  std::vector<std::string> files;
  std::vector<std::FILE*> out;
  auto close_all = [&] {
    for (std::FILE* f : out)
      if (f != nullptr) std::fclose(f);
    out.clear();
  };
  for (int i = 0; i < shards; ++i) {
    files.push_back((fs::path(dir) / shard_name(split, i, shards)).string());
    out.push_back(std::fopen(files.back().c_str(), "wb"));
    if (out.back() == nullptr) {
      Status status = errno_status(errno, "cannot create", files.back());
      close_all();
      return status;
    }
  }
  const float* pixels = data.images.data<float>();
  const int64_t* labels = data.labels.data<int64_t>();
  for (int64_t j = 0; j < data.size(); ++j) {
    std::string record =
        tfrecord_frame(encode_example(pixels + j * kFashionMnistPixels, labels[j]));
    int shard = static_cast<int>(j % shards);
    if (std::fwrite(record.data(), 1, record.size(), out[shard]) != record.size()) {
      Status status = errno_status(errno, "cannot write", files[shard]);
      close_all();
      return status;
    }
  }
  for (int i = 0; i < shards; ++i) {
    std::FILE* f = std::exchange(out[i], nullptr);
    if (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0) {
      Status status = errno_status(errno, "cannot write", files[i]);
      std::fclose(f);
      close_all();
      return status;
    }
    if (std::fclose(f) != 0) {
      Status status = errno_status(errno, "cannot close", files[i]);
      close_all();
      return status;
    }
  }
  return files;
}

StatusOr<std::vector<std::string>> fashion_mnist_record_files(const std::string& dir,
                                                              const std::string& split) {
  TROUPE_RETURN_IF_ERROR(check_split(split));
  const std::regex name(split + R"(-(\d{5})-of-(\d{5})\.tfrecord)");
  std::map<int, std::string> found;
  std::set<int> totals;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    std::smatch m;
    std::string file = it->path().filename().string();
    if (!std::regex_match(file, m, name)) continue;
    found[std::stoi(m[1])] = it->path().string();
    totals.insert(std::stoi(m[2]));
  }
  if (found.empty()) {
    return errors::NotFound(
        "no {} records ({}-NNNNN-of-NNNNN.tfrecord) in '{}' (troupe data fashion-mnist "
        "--to={} writes them)",
        split, split, dir, dir);
  }
  int total = *totals.rbegin();
  if (totals.size() != 1 || static_cast<int>(found.size()) != total ||
      found.rbegin()->first != total - 1) {
    return errors::FailedPrecondition(
        "'{}' has {} {} shard files where their names say {}: a shard is missing or the files "
        "come from two writes",
        dir, found.size(), split, total);
  }
  std::vector<std::string> files;
  for (auto& [index, file] : found)
    files.push_back(file);
  TROUPE_RETURN_IF_ERROR(check_first_record(files.front()));
  return files;
}

StatusOr<int64_t> count_records(const std::vector<std::string>& files) {
  int64_t total = 0;
  for (const std::string& file : files) {
    TROUPE_ASSIGN_OR_RETURN(TFRecordReader reader, TFRecordReader::open(file));
    std::string record;
    for (bool end = false;;) {
      TROUPE_RETURN_IF_ERROR(reader.read(&record, &end));
      if (end) break;
    }
    total += reader.records_read();
  }
  return total;
}

StatusOr<Dataset> read_fashion_mnist_records(const std::string& dir, const std::string& split) {
  TROUPE_ASSIGN_OR_RETURN(auto files, fashion_mnist_record_files(dir, split));
  std::vector<std::vector<std::pair<std::vector<float>, int64_t>>> shards;
  size_t total = 0;
  for (const std::string& file : files) {
    TROUPE_ASSIGN_OR_RETURN(TFRecordReader reader, TFRecordReader::open(file));
    auto& examples = shards.emplace_back();
    for (;;) {
      std::string record;
      bool end = false;
      TROUPE_RETURN_IF_ERROR(reader.read(&record, &end));
      if (end) break;
      std::string what = fmt::format("'{}' record {}", file, reader.records_read() - 1);
      TROUPE_ASSIGN_OR_RETURN(auto features, decode_example(record, what));
      TROUPE_RETURN_IF_ERROR(check_example(features, what));
      const std::string& image = features.find("image_raw")->second.bytes[0];
      auto label = features.find("label");
      std::vector<float> pixels(kFashionMnistPixels);
      for (int i = 0; i < kFashionMnistPixels; ++i)
        pixels[i] = static_cast<float>(static_cast<uint8_t>(image[i])) / 255.0f;
      examples.emplace_back(std::move(pixels), label->second.ints[0]);
      ++total;
    }
  }
  Dataset data;
  data.images =
      Tensor(DataType::kFloat, TensorShape{static_cast<int64_t>(total), kFashionMnistPixels});
  data.labels = Tensor(DataType::kInt64, TensorShape{static_cast<int64_t>(total)});
  // Example j was written to shard j % n: interleave the shards back into the original order.
  std::vector<size_t> next(shards.size(), 0);
  for (size_t j = 0; j < total; ++j) {
    size_t shard = j % shards.size();
    if (next[shard] >= shards[shard].size()) {
      return errors::DataLoss("'{}': shard {} has {} records, too few for {} in all", dir, shard,
                              shards[shard].size(), total);
    }
    const auto& [pixels, label] = shards[shard][next[shard]++];
    std::copy(pixels.begin(), pixels.end(),
              data.images.data<float>() + static_cast<int64_t>(j) * kFashionMnistPixels);
    data.labels.data<int64_t>()[j] = label;
  }
  return data;
}

RecordBatches fashion_mnist_record_batches(const Scope& scope,
                                           const std::vector<std::string>& files, int shard_index,
                                           int num_shards, int64_t batch_size, uint64_t seed) {
  Scope s = scope.sub_scope("input");
  auto filenames = ops::Const(s, Tensor::from_vector<std::string>(files));
  Output d = ops::TFRecordDataset(s, filenames);
  d = ops::ShardDataset(s, d, int64_t{num_shards}, int64_t{shard_index});
  // A buffer of 10,000 records (about 10 MB) mixes each epoch well; seeded from --seed, with
  // each worker's stream of its own.
  d = ops::ShuffleDataset(s, d, int64_t{10000}, static_cast<int64_t>(seed),
                          int64_t{shard_index + 1});
  d = ops::RepeatDataset(s, d, int64_t{-1});
  d = ops::BatchDataset(s, d, batch_size, true);
  ops::DatasetShapes element{
      {DataType::kFloat, DataType::kInt64},
      {PartialShape{batch_size, kFashionMnistPixels}, PartialShape{batch_size}}};
  d = ops::MapDataset(s, d, {}, parse_batch_function(), element);
  d = ops::PrefetchDataset(s, d, int64_t{2});
  auto next = ops::IteratorGetNext(s, ops::OneShotIterator(s, d, element), element);
  if (next.size() != 2) return {};
  return {next[0], next[1]};
}

}  // namespace troupe
