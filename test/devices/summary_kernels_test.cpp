// Tests for the summary kernels: each output decoded field by field as tensorflow.Summary
// (the values, histogram statistics and buckets, the PNG's pixels, the WAV's samples), and
// the errors TensorFlow gives (shapes, NaN in a histogram, duplicate tags in a merge).
#include <zlib.h>

#include <bit>
#include <cstring>
#include <map>

#include "devices/run_graph.hpp"
#include "troupe/graph/core/protobuf_wire.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::check_error;
using testing::run_graph;
using testing::run_one;

namespace {

// The fields of one message: number -> raw values (varints and fixed as their bits, bytes as
// they are), in order.
using Fields = std::multimap<uint32_t, std::string>;

Fields decode(std::string_view bytes) {
  const std::string what = "test";
  proto::ProtoReader r(bytes, what);
  Fields fields;
  while (!r.done()) {
    uint32_t field, type;
    throw_if_error(r.read_key(&field, &type));
    std::string value;
    if (type == proto::kLengthDelimited) {
      std::string_view v;
      throw_if_error(r.read_bytes(&v));
      value = std::string(v);
    } else {
      uint64_t v;
      throw_if_error(type == proto::kVarint ? r.read_varint(&v)
                                            : r.read_fixed(type == proto::kFixed64 ? 8 : 4, &v));
      value = std::string(reinterpret_cast<const char*>(&v), 8);
    }
    fields.emplace(field, value);
  }
  return fields;
}

uint64_t bits(const std::string& value) {
  uint64_t v;
  std::memcpy(&v, value.data(), 8);
  return v;
}
double as_double(const std::string& value) {
  return std::bit_cast<double>(bits(value));
}
float as_float(const std::string& value) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits(value)));
}

// The Values of the summary a step computed.
std::vector<Fields> values_of(const Tensor& summary) {
  BOOST_REQUIRE(summary.dtype() == DataType::kString);
  std::vector<Fields> values;
  for (const auto& [field, value] : decode(summary.scalar<std::string>())) {
    BOOST_REQUIRE(field == 1u);
    values.push_back(decode(value));
  }
  return values;
}

std::vector<double> packed_doubles(const std::string& bytes) {
  std::vector<double> out(bytes.size() / 8);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(summary_kernels)

BOOST_AUTO_TEST_CASE(scalar_summaries_pair_tags_and_values) {
  Scope s = Scope::new_root();
  auto summary =
      ops::ScalarSummary(s, Tensor::from_vector<std::string>({"loss", "accuracy"}), {0.25, 0.75});
  auto values = values_of(run_one(s, summary));
  BOOST_REQUIRE(values.size() == 2u);
  BOOST_TEST(values[0].find(1)->second == "loss");
  BOOST_TEST(as_float(values[0].find(2)->second) == 0.25f);
  BOOST_TEST(values[1].find(1)->second == "accuracy");
  BOOST_TEST(as_float(values[1].find(2)->second) == 0.75f);

  ops::ScalarSummary(s.with_op_name("bad"), Tensor::from_vector<std::string>({"a", "b"}),
                     {1.f, 2.f, 3.f});
  check_error(s.status(), Code::kInvalidArgument, "tags and values are not the same shape");
}

BOOST_AUTO_TEST_CASE(histograms_have_tensorflows_statistics_and_buckets) {
  Scope s = Scope::new_root();
  auto summary = ops::HistogramSummary(s, "weights", {0.0, 1.0, 2.0, 2.0, -3.0});
  auto values = values_of(run_one(s, summary));
  BOOST_REQUIRE(values.size() == 1u);
  BOOST_TEST(values[0].find(1)->second == "weights");
  Fields histo = decode(values[0].find(5)->second);
  BOOST_TEST(as_double(histo.find(1)->second) == -3.0);  // min
  BOOST_TEST(as_double(histo.find(2)->second) == 2.0);   // max
  BOOST_TEST(as_double(histo.find(3)->second) == 5.0);   // num
  BOOST_TEST(as_double(histo.find(4)->second) == 2.0);   // sum
  BOOST_TEST(as_double(histo.find(5)->second) == 18.0);  // sum of squares
  auto limits = packed_doubles(histo.find(6)->second);
  auto counts = packed_doubles(histo.find(7)->second);
  BOOST_REQUIRE(limits.size() == counts.size());
  double total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    total += counts[i];
    if (i > 0) BOOST_TEST(limits[i] > limits[i - 1]);
    // A non-empty bucket holds what is below its limit and at or above the one before.
    if (counts[i] == 2) BOOST_TEST((limits[i] > 2.0 && limits[i - 1] <= 2.0));
  }
  BOOST_TEST(total == 5.0);

  auto nan = ops::HistogramSummary(s, "bad", {1.0f, std::nanf("")});
  check_error(run_graph(s, {nan}).status(), Code::kInvalidArgument,
              "Nan in summary histogram for: bad");
}

BOOST_AUTO_TEST_CASE(images_are_pngs_scaled_as_tensorflow_scales_them) {
  Scope s = Scope::new_root();
  // Two 1x2 RGB images: the first non-negative (max 2 -> 255), the second signed (0 -> 128).
  auto images = ops::Const(s, value_or_throw(Tensor::from_vector<float>(
                                  {0, 1, 2, 2, 1, 0, -1, 0, 1, 1, 0, -1}, {2, 1, 2, 3})));
  auto one = ops::ImageSummary(s, "img", images, 1);
  auto values = values_of(run_one(s, one));
  BOOST_REQUIRE(values.size() == 1u);
  BOOST_TEST(values[0].find(1)->second == "img/image");
  Fields image = decode(values[0].find(4)->second);
  BOOST_TEST(bits(image.find(1)->second) == 1u);  // height
  BOOST_TEST(bits(image.find(2)->second) == 2u);  // width
  BOOST_TEST(bits(image.find(3)->second) == 3u);  // colorspace
  const std::string png = image.find(4)->second;
  BOOST_REQUIRE(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  // IDAT starts after the signature (8) and IHDR (4 + 4 + 13 + 4 bytes).
  size_t idat = 8 + 25;
  BOOST_REQUIRE(png.substr(idat + 4, 4) == "IDAT");
  uint32_t length = (uint8_t(png[idat]) << 24) | (uint8_t(png[idat + 1]) << 16) |
                    (uint8_t(png[idat + 2]) << 8) | uint8_t(png[idat + 3]);
  std::vector<uint8_t> rows(7);
  uLongf size = rows.size();
  BOOST_REQUIRE(::uncompress(rows.data(), &size,
                             reinterpret_cast<const Bytef*>(png.data() + idat + 8),
                             length) == Z_OK);
  BOOST_TEST(size == 7u);
  BOOST_TEST((std::vector<uint8_t>(rows.begin(), rows.end()) ==
              std::vector<uint8_t>{0, 0, 127, 255, 255, 127, 0}));

  auto both = values_of(run_one(s, ops::ImageSummary(s, "img", images, 3)));
  BOOST_REQUIRE(both.size() == 2u);
  BOOST_TEST(both[1].find(1)->second == "img/image/1");

  ops::ImageSummary(s.with_op_name("gray2"), "x",
                    ops::Const(s, value_or_throw(Tensor::from_vector<float>({1, 2}, {1, 1, 1, 2}))),
                    1);
  check_error(s.status(), Code::kInvalidArgument, "1, 3 or 4 channels");
}

BOOST_AUTO_TEST_CASE(audio_is_16_bit_wav) {
  Scope s = Scope::new_root();
  auto clip = ops::Const(s, value_or_throw(Tensor::from_vector<float>({0, 0.5, -1, 1}, {1, 4})));
  auto values = values_of(run_one(s, ops::AudioSummaryV2(s, "snd", clip, 8000.f, 1)));
  BOOST_REQUIRE(values.size() == 1u);
  BOOST_TEST(values[0].find(1)->second == "snd/audio");
  Fields audio = decode(values[0].find(6)->second);
  BOOST_TEST(as_float(audio.find(1)->second) == 8000.f);
  BOOST_TEST(bits(audio.find(2)->second) == 1u);  // channels
  BOOST_TEST(bits(audio.find(3)->second) == 4u);  // frames
  BOOST_TEST(audio.find(5)->second == "audio/wav");
  const std::string wav = audio.find(4)->second;
  BOOST_REQUIRE(wav.size() == 44u + 8u);
  BOOST_TEST(wav.substr(0, 4) == "RIFF");
  BOOST_TEST(wav.substr(8, 4) == "WAVE");
  int16_t samples[4];
  std::memcpy(samples, wav.data() + 44, 8);
  BOOST_TEST(samples[0] == 0);
  BOOST_TEST(samples[1] == 16384);
  BOOST_TEST(samples[2] == -32768);
  BOOST_TEST(samples[3] == 32767);
}

BOOST_AUTO_TEST_CASE(text_goes_as_a_tensor_with_its_metadata) {
  Scope s = Scope::new_root();
  auto summary =
      ops::TensorSummaryV2(s, "notes", Tensor::from_vector<std::string>({"hello", "world"}),
                           Tensor(std::string("\x0a\x06\x0a\x04text", 8)));
  auto values = values_of(run_one(s, summary));
  BOOST_REQUIRE(values.size() == 1u);
  BOOST_TEST(values[0].find(9)->second == std::string("\x0a\x06\x0a\x04text", 8));
  Fields tensor = decode(values[0].find(8)->second);
  BOOST_TEST(bits(tensor.find(1)->second) == 7u);  // DT_STRING
  auto strings = tensor.equal_range(8);
  std::vector<std::string> got;
  for (auto it = strings.first; it != strings.second; ++it)
    got.push_back(it->second);
  BOOST_TEST((got == std::vector<std::string>{"hello", "world"}));
}

BOOST_AUTO_TEST_CASE(merging_keeps_every_value_and_refuses_a_tag_twice) {
  Scope s = Scope::new_root();
  auto a = ops::ScalarSummary(s, "a", 1.f);
  auto h = ops::HistogramSummary(s, "h", {1.f, 2.f});
  auto merged = values_of(run_one(s, ops::MergeSummary(s, {a, h})));
  BOOST_REQUIRE(merged.size() == 2u);
  BOOST_TEST(merged[0].find(1)->second == "a");
  BOOST_TEST(merged[1].find(1)->second == "h");

  auto again = ops::MergeSummary(s.with_op_name("twice"), {a, ops::ScalarSummary(s, "a", 2.f)});
  check_error(run_graph(s, {again}).status(), Code::kInvalidArgument,
              "Duplicate tag a found in summary inputs");
  auto junk =
      ops::MergeSummary(s.with_op_name("junk"), {ops::Const(s, Tensor(std::string("\x0a\x05xx")))});
  check_error(run_graph(s, {junk}).status(), Code::kInvalidArgument,
              "Could not parse one of the summary inputs");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
