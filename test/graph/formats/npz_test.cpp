// Tests of .npz checkpoints (graph/formats/npz.hpp): round trips, corruption, and — where
// python3 with numpy is installed — that numpy reads what we write and we read what it writes.
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <type_traits>

#include "status_checks.hpp"
#include "temp_files.hpp"
#include "troupe/graph/formats/npy.hpp"
#include "troupe/graph/formats/npz.hpp"

namespace troupe {
using testing::has_temporary_files;
using testing::read_file;
using testing::TempDir;
using testing::write_file;
namespace {

namespace fs = std::filesystem;
using testing::check_error;

uint32_t le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}
void set_le32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Replaces `from` by `to` (same length) in the one entry of a one-entry archive we wrote, and
// fixes its CRC in the local and central headers, so only the changed content is wrong.
std::string patch_single_entry(std::string zip, const std::string& from, const std::string& to) {
  BOOST_REQUIRE(from.size() == to.size());
  size_t at = zip.find(from);
  BOOST_REQUIRE(at != std::string::npos);
  zip.replace(at, from.size(), to);
  uint16_t name_len = static_cast<uint8_t>(zip[26]) | (static_cast<uint8_t>(zip[27]) << 8);
  uint32_t size = le32(zip, 18);
  auto crc = static_cast<uint32_t>(
      ::crc32(0, reinterpret_cast<const Bytef*>(zip.data()) + 30 + name_len, size));
  size_t cd = le32(zip, zip.size() - 22 + 16);
  set_le32(zip, 14, crc);
  set_le32(zip, cd + 16, crc);
  return zip;
}

std::vector<std::pair<std::string, Tensor>> sample_tensors() {
  return {
      {"global_step", Tensor::scalar<int64_t>(1234567890123)},
      {"layer1/weights",
       value_or_throw(Tensor::from_vector<float>({0.5f, -1.25f, 3.f, 1e-7f, 0.1f, -0.f}, {2, 3}))},
      {"layer1/bias", Tensor::from_vector<double>({1.0 / 3, -2.5, 1e300})},
      {"layer2/deep/counts",
       value_or_throw(Tensor::from_vector<int32_t>({1, -2, 3, 4, 5, 6, 7, 2147483647}, {2, 2, 2}))},
      {"mask", value_or_throw(Tensor::from_vector<bool>({true, false, false, true}, {2, 2}))},
      {"flag", Tensor::scalar<bool>(true)},
      {"pi", Tensor::scalar<double>(3.141592653589793)},
      {"lr", Tensor::scalar<float>(0.01f)},
      {"ids", Tensor::from_vector<int64_t>({-1, 0, int64_t{1} << 62})},
      {"empty/rows", Tensor(DataType::kFloat, TensorShape{0, 3})},
      {"pixels", value_or_throw(Tensor::from_vector<uint8_t>({0, 1, 127, 128, 255, 7}, {3, 2}))},
  };
}

void check_same(const NamedTensors& actual, const NamedTensors& expected) {
  BOOST_REQUIRE_EQUAL(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    BOOST_TEST(actual[i].first == expected[i].first);
    BOOST_TEST(actual[i].second.equals(expected[i].second),
               actual[i].first << ": " << actual[i].second.debug_string() << " vs "
                               << expected[i].second.debug_string());
  }
}

// ---- python3 with numpy ---------------------------------------------------------------------

// A python interpreter that can import numpy, or "" if there is none. TROUPE_PYTHON overrides;
// /usr/bin/python3 is tried after python3 because a pyenv python3 first on PATH may lack the
// Debian python3-numpy package.
std::string python_with_numpy() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("TROUPE_PYTHON")) candidates.emplace_back(env);
  candidates.emplace_back("python3");
  candidates.emplace_back("/usr/bin/python3");
  for (const std::string& python : candidates) {
    std::string command = python + " -c 'import numpy' >/dev/null 2>&1";
    if (std::system(command.c_str()) == 0) return python;
  }
  return "";
}

// Runs `script` with `python`, returning its exit code; *output gets stdout and stderr.
int run_python(const std::string& python, const TempDir& dir, const std::string& script,
               std::string* output) {
  std::string script_path = dir.file("check.py");
  write_file(script_path, script);
  std::string command = python + " " + script_path + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  BOOST_REQUIRE(pipe != nullptr);
  char buffer[4096];
  output->clear();
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    output->append(buffer, n);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A Python literal of one element.
template <class T>
std::string python_value(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "True" : "False";
  } else if constexpr (std::is_floating_point_v<T>) {
    return fmt::format("float.fromhex('{:a}')", v);
  } else {
    return std::to_string(v);
  }
}

// A Python literal of a tensor's elements, flattened.
std::string python_values(const Tensor& t) {
  std::string out = "[";
  TROUPE_SWITCH_NUMERIC_OR_BOOL(t.dtype(), T, {
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if (i > 0) out += ", ";
      out += python_value<T>(t.flat<T>()[i]);
    }
  });
  return out + "]";
}

std::string python_descr(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
      return "<f4";
    case DataType::kDouble:
      return "<f8";
    case DataType::kInt32:
      return "<i4";
    case DataType::kInt64:
      return "<i8";
    case DataType::kUint8:
      return "|u1";
    default:
      return "|b1";
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(npz)

BOOST_AUTO_TEST_CASE(round_trip_of_every_dtype_and_rank) {
  TempDir dir;
  const std::string path = dir.file("model.ckpt.npz");
  auto tensors = sample_tensors();
  BOOST_REQUIRE(write_npz(path, tensors).ok());
  BOOST_TEST(!has_temporary_files(path));
  auto back = read_npz(path);
  BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  check_same(*back, tensors);

  // Entries keep the '/' of their names.
  std::string bytes = read_file(path);
  BOOST_TEST(bytes.find("layer2/deep/counts.npy") != std::string::npos);
  // The same tensors give the same bytes, and a rewrite replaces the file.
  BOOST_REQUIRE(write_npz(path, tensors).ok());
  BOOST_TEST(read_file(path) == bytes);
  BOOST_REQUIRE(write_npz(path, {{"only", Tensor::scalar<int32_t>(7)}}).ok());
  auto only = read_npz(path);
  BOOST_REQUIRE(only.ok());
  check_same(*only, {{"only", Tensor::scalar<int32_t>(7)}});

  // No tensors at all is an empty archive.
  BOOST_REQUIRE(write_npz(path, {}).ok());
  auto none = read_npz(path);
  BOOST_REQUIRE(none.ok());
  BOOST_TEST(none->empty());
}

BOOST_AUTO_TEST_CASE(named_tensors_are_read_alone_in_the_order_asked) {
  TempDir dir;
  const std::string path = dir.file("model.ckpt.npz");
  BOOST_REQUIRE(write_npz(path, {{"a", Tensor::scalar<int32_t>(1)},
                                 {"b/c", Tensor::scalar<int32_t>(2)},
                                 {"d", Tensor::scalar<int32_t>(3)}})
                    .ok());
  auto some = read_npz_tensors(path, {"d", "a", "d"});
  BOOST_REQUIRE_MESSAGE(some.ok(), some.status().to_string());
  BOOST_REQUIRE_EQUAL(some->size(), 3u);
  BOOST_TEST(some->at(0).scalar<int32_t>() == 3);
  BOOST_TEST(some->at(1).scalar<int32_t>() == 1);
  BOOST_TEST(some->at(2).scalar<int32_t>() == 3);
  check_error(read_npz_tensors(path, {"a", "e"}).status(), Code::kNotFound,
              "Key e not found in checkpoint '" + path + "'");
  check_error(read_npz_tensors(dir.file("none.npz"), {"a"}).status(), Code::kNotFound,
              "does not exist");

  // Only the members asked for are read and checked: a damaged one elsewhere in the archive
  // does not stop the others (read_npz, which reads them all, finds it).
  const std::string damaged = dir.file("damaged.npz");
  BOOST_REQUIRE(write_npz(damaged, {{"big", Tensor::from_vector<float>(std::vector<float>(1000))},
                                    {"small", Tensor::scalar<int32_t>(5)}})
                    .ok());
  std::string bytes = read_file(damaged);
  bytes[30 + 7 + 128 + 400] ^= 0x40;  // inside big's data: local header, name, npy header
  {
    std::ofstream out(damaged, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  auto small = read_npz_tensors(damaged, {"small"});
  BOOST_REQUIRE_MESSAGE(small.ok(), small.status().to_string());
  BOOST_TEST(small->at(0).scalar<int32_t>() == 5);
  check_error(read_npz_tensors(damaged, {"big"}).status(), Code::kDataLoss, "CRC-32 mismatch");
  check_error(read_npz(damaged).status(), Code::kDataLoss, "entry 'big.npy'");
}

BOOST_AUTO_TEST_CASE(npy_header_is_numpy_format_1_0) {
  auto npy = encode_npy(value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3})));
  BOOST_REQUIRE(npy.ok());
  BOOST_TEST(npy->substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  size_t header_len = static_cast<uint8_t>((*npy)[8]) | (static_cast<uint8_t>((*npy)[9]) << 8);
  BOOST_TEST((10 + header_len) % 64 == 0u);
  std::string header = npy->substr(10, header_len);
  BOOST_TEST(header.back() == '\n');
  BOOST_TEST(header.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") == 0u);
  BOOST_TEST(npy->size() == 10 + header_len + 6 * sizeof(float));

  auto vector = encode_npy(Tensor::from_vector<int64_t>({1, 2, 3}));
  BOOST_TEST(vector->find("'shape': (3,), ") != std::string::npos);
  auto scalar = encode_npy(Tensor::scalar<bool>(false));
  BOOST_TEST(scalar->find("{'descr': '|b1', 'fortran_order': False, 'shape': (), }") !=
             std::string::npos);
  auto back = decode_npy(*npy, "test");
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(back->equals(value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}))));
}

BOOST_AUTO_TEST_CASE(bad_arguments_are_invalid_argument) {
  TempDir dir;
  const std::string path = dir.file("bad.npz");
  check_error(write_npz(path, {{"words", Tensor("hello")}}), Code::kInvalidArgument, "words");
  check_error(write_npz(path, {{"x", Tensor()}}), Code::kInvalidArgument, "uninitialised");
  check_error(write_npz(path, {{"", Tensor(1.f)}}), Code::kInvalidArgument, "empty tensor name");
  check_error(write_npz(path, {{"w", Tensor(1.f)}, {"w", Tensor(2.f)}}), Code::kInvalidArgument,
              "'w' appears twice");
  BOOST_TEST(!fs::exists(path));
  BOOST_TEST(!has_temporary_files(path));
  check_error(write_npz(dir.file("no/such/dir/x.npz"), {{"w", Tensor(1.f)}}), Code::kNotFound,
              "no/such/dir/x.npz.tmp");
}

BOOST_AUTO_TEST_CASE(missing_file_is_not_found) {
  TempDir dir;
  check_error(read_npz(dir.file("absent.npz")).status(), Code::kNotFound, "absent.npz");
}

BOOST_AUTO_TEST_CASE(corrupt_crc_is_data_loss_naming_the_entry) {
  TempDir dir;
  const std::string path = dir.file("ckpt.npz");
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i);
  BOOST_REQUIRE(write_npz(path, {{"a/first", Tensor(1.f)},
                                 {"layer1/weights", Tensor::from_vector<float>(values)}})
                    .ok());
  std::string bytes = read_file(path);
  // Flip a bit in the middle of the weights' data.
  size_t weights = bytes.find("layer1/weights.npy");
  BOOST_REQUIRE(weights != std::string::npos);
  bytes[weights + 18 + 128 + 2000] ^= 0x10;
  write_file(path, bytes);
  auto back = read_npz(path);
  check_error(back.status(), Code::kDataLoss, "CRC-32 mismatch");
  check_error(back.status(), Code::kDataLoss, "layer1/weights.npy");
}

BOOST_AUTO_TEST_CASE(truncated_or_garbage_file_is_data_loss) {
  TempDir dir;
  const std::string path = dir.file("ckpt.npz");
  BOOST_REQUIRE(write_npz(path, sample_tensors()).ok());
  const std::string bytes = read_file(path);
  for (size_t keep : {size_t{0}, size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    write_file(path, bytes.substr(0, keep));
    check_error(read_npz(path).status(), Code::kDataLoss, path);
  }
  // The end record intact but entries cut out of the middle: offsets point past the data.
  write_file(path, bytes.substr(0, 100) + bytes.substr(400));
  check_error(read_npz(path).status(), Code::kDataLoss, path);
  write_file(path, std::string(5000, 'x'));
  check_error(read_npz(path).status(), Code::kDataLoss, "not a ZIP archive");
}

BOOST_AUTO_TEST_CASE(corrupt_npy_content_is_reported) {
  TempDir dir;
  const std::string path = dir.file("one.npz");
  BOOST_REQUIRE(write_npz(path, {{"v", Tensor::from_vector<int32_t>({1, 2})}}).ok());
  const std::string good = read_file(path);

  write_file(path, patch_single_entry(good, "'<i4'", "'<u4'"));
  check_error(read_npz(path).status(), Code::kInvalidArgument, "dtype '<u4' is not supported");
  write_file(path, patch_single_entry(good, "False", "True "));
  check_error(read_npz(path).status(), Code::kInvalidArgument, "fortran_order");
  write_file(path, patch_single_entry(good, "(2,)", "(3,)"));
  check_error(read_npz(path).status(), Code::kDataLoss, "entry 'v.npy'");
  write_file(path, patch_single_entry(good, "'shape'", "'shave'"));
  check_error(read_npz(path).status(), Code::kDataLoss, "malformed .npy header");
  write_file(path, patch_single_entry(good, "NUMPY", "NUMPX"));
  check_error(read_npz(path).status(), Code::kDataLoss, "not a .npy array");
  write_file(path, patch_single_entry(good, "v.npy", "v.txt"));
  check_error(read_npz(path).status(), Code::kDataLoss, "local file header disagrees");

  // Big-endian arrays are read with their bytes swapped into place.
  write_file(path, patch_single_entry(good, "'<i4'", "'>i4'"));
  auto swapped = read_npz(path);
  BOOST_REQUIRE_MESSAGE(swapped.ok(), swapped.status().to_string());
  BOOST_TEST(
      swapped->at(0).second.to_vector<int32_t>() == (std::vector<int32_t>{0x01000000, 0x02000000}),
      boost::test_tools::per_element());

  BOOST_REQUIRE(write_npz(path, {{"b", Tensor::from_vector<bool>({true, false})}}).ok());
  std::string bools = read_file(path);
  size_t data = bools.find('\n', bools.find("NUMPY")) + 1;
  std::string bad = bools;
  bad[data] = 7;
  uint16_t name_len = 5;
  auto crc = static_cast<uint32_t>(
      ::crc32(0, reinterpret_cast<const Bytef*>(bad.data()) + 30 + name_len, le32(bad, 18)));
  set_le32(bad, 14, crc);
  set_le32(bad, le32(bad, bad.size() - 22 + 16) + 16, crc);
  write_file(path, bad);
  check_error(read_npz(path).status(), Code::kDataLoss, "bool element 0");
}

BOOST_AUTO_TEST_CASE(numpy_reads_what_we_write) {
  std::string python = python_with_numpy();
  if (python.empty()) {
    BOOST_TEST_MESSAGE("skipped: no python3 with numpy (apt-get install python3-numpy)");
    return;
  }
  TempDir dir;
  const std::string path = dir.file("ours.npz");
  auto tensors = sample_tensors();
  BOOST_REQUIRE(write_npz(path, tensors).ok());
  std::string script = "import numpy as np, sys, zipfile\n";
  script += "path = " + fmt::format("'{}'", path) + "\n";
  script += "assert zipfile.ZipFile(path).testzip() is None\n";
  script += "expected = {\n";
  for (const auto& [name, tensor] : tensors) {
    std::string shape = "(";
    for (int i = 0; i < tensor.rank(); ++i)
      shape += std::to_string(tensor.dim(i)) + ",";
    shape += ")";
    script += fmt::format("  '{}': ('{}', {}, {}),\n", name, python_descr(tensor.dtype()), shape,
                          python_values(tensor));
  }
  script += R"(}
z = np.load(path)
assert sorted(z.files) == sorted(expected), (z.files, sorted(expected))
for key, (descr, shape, values) in expected.items():
    a = z[key]
    assert a.dtype.str == descr, (key, a.dtype.str, descr)
    assert a.shape == shape, (key, a.shape, shape)
    want = np.array(values, dtype=a.dtype).reshape(shape)
    assert np.array_equal(a, want), (key, a, want)
print('numpy agrees on', len(expected), 'arrays')
)";
  std::string output;
  int rc = run_python(python, dir, script, &output);
  BOOST_TEST(rc == 0, output);
  BOOST_TEST_MESSAGE(output);
}

BOOST_AUTO_TEST_CASE(we_read_what_numpy_writes) {
  std::string python = python_with_numpy();
  if (python.empty()) {
    BOOST_TEST_MESSAGE("skipped: no python3 with numpy (apt-get install python3-numpy)");
    return;
  }
  TempDir dir;
  const std::string stored = dir.file("stored.npz");
  const std::string compressed = dir.file("compressed.npz");
  const std::string unsupported = dir.file("uint16.npz");
  const std::string pixels = dir.file("uint8.npz");
  const std::string fortran = dir.file("fortran.npz");
  std::string script = fmt::format(R"(import numpy as np
arrays = {{
    'layer1/weights': np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
    'layer1/bias': np.array([0.1, -2.0], dtype=np.float64),
    'step': np.array(42, dtype=np.int64),
    'counts': np.arange(24, dtype=np.int32).reshape(2, 3, 4),
    'mask': np.array([True, False, True]),
    'big_endian': np.array([1, 2, 3], dtype='>i4'),
    'long': np.arange(10000, dtype=np.float32) * 0.5,
}}
np.savez('{}', **arrays)
np.savez_compressed('{}', **arrays)
np.savez('{}', pixels=np.zeros(3, dtype=np.uint16))
np.savez('{}', pixels=np.array([[0, 200], [255, 3]], dtype=np.uint8))
np.savez('{}', f=np.asfortranarray(np.ones((2, 3), dtype=np.float32)))
)",
                                   stored, compressed, unsupported, pixels, fortran);
  std::string output;
  BOOST_REQUIRE_MESSAGE(run_python(python, dir, script, &output) == 0, output);

  std::vector<float> weights = {0, 0.25f, 0.5f, 0.75f, 1, 1.25f};
  std::vector<int32_t> counts(24);
  for (int i = 0; i < 24; ++i)
    counts[i] = i;
  std::vector<float> long_values(10000);
  for (int i = 0; i < 10000; ++i)
    long_values[i] = i * 0.5f;
  NamedTensors expected = {
      {"layer1/weights", value_or_throw(Tensor::from_vector<float>(weights, {2, 3}))},
      {"layer1/bias", Tensor::from_vector<double>({0.1, -2.0})},
      {"step", Tensor::scalar<int64_t>(42)},
      {"counts", value_or_throw(Tensor::from_vector<int32_t>(counts, {2, 3, 4}))},
      {"mask", Tensor::from_vector<bool>({true, false, true})},
      {"big_endian", Tensor::from_vector<int32_t>({1, 2, 3})},
      {"long", Tensor::from_vector<float>(long_values)},
  };
  for (const std::string& path : {stored, compressed}) {
    BOOST_TEST_CONTEXT(path) {
      auto back = read_npz(path);
      BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
      check_same(*back, expected);
    }
  }
  check_error(read_npz(unsupported).status(), Code::kInvalidArgument, "'<u2'");
  auto read_pixels = read_npz(pixels);
  BOOST_REQUIRE_MESSAGE(read_pixels.ok(), read_pixels.status().to_string());
  check_same(*read_pixels,
             {{"pixels", value_or_throw(Tensor::from_vector<uint8_t>({0, 200, 255, 3}, {2, 2}))}});
  check_error(read_npz(fortran).status(), Code::kInvalidArgument, "fortran_order");

  // A flipped bit in the deflate stream is caught (by inflate or the CRC).
  std::string bytes = read_file(compressed);
  bytes[bytes.find("long.npy") + 8 + 20 + 40] ^= 0x01;
  write_file(compressed, bytes);
  check_error(read_npz(compressed).status(), Code::kDataLoss, "long.npy");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
