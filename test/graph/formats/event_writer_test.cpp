// Tests of TensorBoard event files (graph/formats/event_writer.hpp): CRC32C vectors, record
// bytes derived by hand from the protobuf and TFRecord rules, round trips, corruption, and —
// where python3 is installed — an independent reader in Python.
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <bit>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "status_checks.hpp"
#include "temp_files.hpp"
#include "troupe/graph/formats/event_writer.hpp"

namespace troupe {
using testing::read_file;
using testing::TempDir;
using testing::write_file;
namespace {

namespace fs = std::filesystem;
using testing::check_error;

std::string bytes_of(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes)
    out.push_back(static_cast<char>(b));
  return out;
}

std::string le(uint64_t v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

// The bytes after the first record (the file_version event) of an event file.
std::string after_first_record(const std::string& file) {
  BOOST_REQUIRE(file.size() >= 12);
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i)
    length = (length << 8) | static_cast<uint8_t>(file[i]);
  return file.substr(12 + length + 4);
}

std::string hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes)
    out += fmt::format("{:02x}", c);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(event_writer)

BOOST_AUTO_TEST_CASE(crc32c_test_vectors) {
  const std::string check = "123456789";
  BOOST_TEST(crc32c(check.data(), check.size()) == 0xE3069283u);
  // RFC 3720 (iSCSI), B.4.
  std::string zeros(32, '\0'), ones(32, '\xff'), up, down;
  for (int i = 0; i < 32; ++i)
    up.push_back(static_cast<char>(i));
  for (int i = 31; i >= 0; --i)
    down.push_back(static_cast<char>(i));
  BOOST_TEST(crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);
  BOOST_TEST(crc32c(ones.data(), ones.size()) == 0x62A8AB43u);
  BOOST_TEST(crc32c(up.data(), up.size()) == 0x46DD794Eu);
  BOOST_TEST(crc32c(down.data(), down.size()) == 0x113FDB5Cu);
  BOOST_TEST(crc32c(check.data() + 3, 6, crc32c(check.data(), 3)) == 0xE3069283u);
}

BOOST_AUTO_TEST_CASE(masked_crc) {
  BOOST_TEST(mask_crc32c(0) == 0xa282ead8u);
  // crc32c("123456789") = 0xE3069283 rotated right by 15 is 0x2507c60d; plus 0xa282ead8 is
  // 0xc78ab0e5 (mod 2^32).
  BOOST_TEST(std::rotr(0xE3069283u, 15) == 0x2507c60du);
  BOOST_TEST(mask_crc32c(0xE3069283u) == 0xc78ab0e5u);
  for (uint32_t crc : {0u, 1u, 0xE3069283u, 0xffffffffu, 0x80000000u}) {
    BOOST_TEST(unmask_crc32c(mask_crc32c(crc)) == crc);
    if (crc != 0) BOOST_TEST(mask_crc32c(crc) != crc);
  }
}

BOOST_AUTO_TEST_CASE(scalar_record_bytes_follow_the_protobuf_rules) {
  TempDir dir;
  auto writer = EventWriter::create(dir.file("logs"));
  BOOST_REQUIRE_MESSAGE(writer.ok(), writer.status().to_string());
  BOOST_REQUIRE((*writer)->add_scalar("loss", 300, 0.5, 1234.5).ok());
  BOOST_REQUIRE((*writer)->flush().ok());

  // Value { tag = 1: "loss"; simple_value = 2: 0.5f }
  std::string value = bytes_of({0x0a, 0x04}) + "loss" + bytes_of({0x15, 0x00, 0x00, 0x00, 0x3f});
  // Summary { value = 1: Value }
  std::string summary = bytes_of({0x0a, static_cast<int>(value.size())}) + value;
  // Event { wall_time = 1: 1234.5 (0x40934a0000000000); step = 2: 300 (varint ac 02);
  //         summary = 5: Summary }
  std::string event = bytes_of({0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x4a, 0x93, 0x40}) +
                      bytes_of({0x10, 0xac, 0x02}) +
                      bytes_of({0x2a, static_cast<int>(summary.size())}) + summary;
  BOOST_TEST(event.size() == 27u);
  BOOST_TEST(hex(encode_scalar_event(1234.5, 300, "loss", 0.5f)) == hex(event));
  // TFRecord: length, masked CRC32C of the length, data, masked CRC32C of the data.
  std::string length = le(event.size(), 8);
  std::string record = length + le(mask_crc32c(crc32c(length.data(), 8)), 4) + event +
                       le(mask_crc32c(crc32c(event.data(), event.size())), 4);
  std::string file = read_file((*writer)->path());
  BOOST_TEST(hex(after_first_record(file)) == hex(record));

  // The first record: Event { wall_time = 1: ...; file_version = 3: "brain.Event:2" }.
  BOOST_TEST(static_cast<uint8_t>(file[12]) == 0x09);
  BOOST_TEST(file.substr(12 + 9, 2) == bytes_of({0x1a, 13}));
  BOOST_TEST(file.substr(12 + 11, 13) == "brain.Event:2");

  // proto3 leaves out a zero step; a negative step is a ten-byte varint.
  BOOST_TEST(hex(encode_scalar_event(2.0, 0, "t", 1.f)) ==
             hex(bytes_of({0x09, 0, 0,    0, 0,   0,    0, 0, 0x40, 0x2a, 10,
                           0x0a, 8, 0x0a, 1, 't', 0x15, 0, 0, 0x80, 0x3f})));
  BOOST_TEST(hex(encode_scalar_event(0.0, -1, "t", 0.f)).substr(0, 24) ==
             "10ffffffffffffffffff012a");
}

BOOST_AUTO_TEST_CASE(summary_and_graph_events_hold_their_bytes_as_given) {
  TempDir dir;
  auto writer = EventWriter::create(dir.file("logs"));
  BOOST_REQUIRE_MESSAGE(writer.ok(), writer.status().to_string());
  // A summary op's value: Summary { value = 1: Value { tag = 1: "a"; simple_value = 2: 1.0f } }.
  std::string summary = bytes_of({0x0a, 0x08, 0x0a, 0x01, 'a', 0x15, 0, 0, 0x80, 0x3f});
  BOOST_REQUIRE((*writer)->add_summary(summary, 5, 2.0).ok());
  // Event { wall_time = 1: 2.0; step = 2: 5; summary = 5: the bytes as given }.
  std::string event = bytes_of({0x09, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x10, 5, 0x2a, 10}) + summary;
  BOOST_TEST(hex(encode_summary_event(2.0, 5, summary)) == hex(event));
  // Event { wall_time = 1: 2.0; graph_def = 4: the bytes }.
  BOOST_TEST(hex(encode_graph_event(2.0, "gd")) ==
             hex(bytes_of({0x09, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x22, 2, 'g', 'd'})));
  BOOST_REQUIRE((*writer)->flush().ok());
  std::string file = read_file((*writer)->path());
  BOOST_TEST(after_first_record(file).substr(12, event.size()) == event);

  // Bytes that are no protobuf message (a field key promising more than there is).
  check_error((*writer)->add_summary(bytes_of({0x0a, 0x20, 0x01}), 6), Code::kInvalidArgument,
              "not a serialized tf.Summary");
}

BOOST_AUTO_TEST_CASE(file_name_and_directory) {
  TempDir dir;
  const std::string log_dir = dir.file("runs/a/b");
  auto writer = EventWriter::create(log_dir, ".worker0");
  BOOST_REQUIRE_MESSAGE(writer.ok(), writer.status().to_string());
  fs::path path((*writer)->path());
  BOOST_TEST(path.parent_path() == fs::path(log_dir));
  std::string name = path.filename().string();
  const std::string prefix = "events.out.tfevents.";
  BOOST_REQUIRE(name.rfind(prefix, 0) == 0u);
  std::string seconds = name.substr(prefix.size(), 10);
  BOOST_TEST(seconds.find_first_not_of("0123456789") == std::string::npos);
  BOOST_TEST(std::abs(std::stoll(seconds) - static_cast<int64_t>(EventWriter::now())) < 60);
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  BOOST_TEST(name.substr(prefix.size() + 10) == fmt::format(".{}.worker0", host));

  auto events = EventReader::read_events((*writer)->path());
  BOOST_REQUIRE(events.ok());
  BOOST_REQUIRE(events->size() == 1u);
  BOOST_TEST(events->at(0).file_version == kEventFileVersion);
  BOOST_TEST(events->at(0).wall_time > 1.6e9);

  check_error(EventWriter::create(log_dir, "/x").status(), Code::kInvalidArgument, "suffix");
  check_error((*writer)->add_scalar("", 1, 1.0), Code::kInvalidArgument, "empty tag");
}

// A chief restarted within a second, in a container where its pid (the suffix troupe's hooks
// use) is 1 again, used to fail with AlreadyExists; it now gets a file of its own.
BOOST_AUTO_TEST_CASE(writers_of_one_second_get_files_of_their_own) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    // A directory per attempt: files left by an attempt the clock's second cut would
    // otherwise shift the suffixes of the next attempts in the same second.
    TempDir dir;
    auto first = EventWriter::create(dir.file("logs"), ".1");
    auto second = EventWriter::create(dir.file("logs"), ".1");
    auto third = EventWriter::create(dir.file("logs"), ".1");
    BOOST_REQUIRE_MESSAGE(
        first.ok() && second.ok() && third.ok(),
        first.status().to_string() + second.status().to_string() + third.status().to_string());
    const std::string& a = (*first)->path();
    if ((*third)->path().substr(0, a.size()) != a) continue;  // the second changed meanwhile
    BOOST_TEST((*second)->path() == a + ".1");
    BOOST_TEST((*third)->path() == a + ".2");
    BOOST_REQUIRE((*second)->add_scalar("loss", 1, 0.5).ok());
    BOOST_REQUIRE((*second)->flush().ok());
    auto scalars = EventReader::read_scalars((*second)->path());
    BOOST_REQUIRE(scalars.ok());
    BOOST_TEST(scalars->size() == 1u);
    return;
  }
  BOOST_FAIL("the clock's second changed in every attempt");
}

BOOST_AUTO_TEST_CASE(round_trip_of_many_scalars) {
  TempDir dir;
  auto writer = EventWriter::create(dir.file("logs"));
  BOOST_REQUIRE(writer.ok());
  const std::vector<std::string> tags = {"loss", "accuracy", "train/learning_rate",
                                         std::string(200, 'x')};
  std::vector<ScalarEvent> expected;
  for (int64_t step = 0; step < 3000; ++step) {
    const std::string& tag = tags[step % tags.size()];
    double value = 1.0 / (step + 1) - 0.001 * step;
    double wall_time = 1.7e9 + step * 0.125;
    BOOST_REQUIRE((*writer)->add_scalar(tag, step, value, wall_time).ok());
    expected.push_back({wall_time, step, tag, static_cast<float>(value)});
  }
  // More than the 64 KiB buffer: some records are in the file before the flush.
  BOOST_TEST(fs::file_size((*writer)->path()) > 64 * 1024);
  BOOST_REQUIRE((*writer)->flush().ok());
  auto scalars = EventReader::read_scalars((*writer)->path());
  BOOST_REQUIRE_MESSAGE(scalars.ok(), scalars.status().to_string());
  BOOST_REQUIRE_EQUAL(scalars->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const ScalarEvent& a = (*scalars)[i];
    const ScalarEvent& e = expected[i];
    if (a.tag != e.tag || a.step != e.step || a.wall_time != e.wall_time || a.value != e.value) {
      BOOST_ERROR("scalar " << i << " differs: " << a.tag << " " << a.step << " " << a.value);
      break;
    }
  }

  // The destructor flushes what is buffered.
  std::string path;
  {
    auto second = EventWriter::create(dir.file("logs2"));
    BOOST_REQUIRE(second.ok());
    path = (*second)->path();
    BOOST_REQUIRE((*second)->add_scalar("last", 9, 9.0).ok());
  }
  auto last = EventReader::read_scalars(path);
  BOOST_REQUIRE(last.ok());
  BOOST_REQUIRE(last->size() == 1u);
  BOOST_TEST(last->at(0).tag == "last");
  BOOST_TEST(last->at(0).value == 9.f);
}

BOOST_AUTO_TEST_CASE(corruption_is_data_loss) {
  TempDir dir;
  auto writer = EventWriter::create(dir.file("logs"));
  BOOST_REQUIRE(writer.ok());
  for (int step = 1; step <= 3; ++step) {
    BOOST_REQUIRE((*writer)->add_scalar("loss", step, step * 0.5, 100.0 + step).ok());
  }
  BOOST_REQUIRE((*writer)->flush().ok());
  const std::string path = (*writer)->path();
  const std::string good = read_file(path);
  const size_t second = good.size() - after_first_record(good).size();  // offset of record 1

  std::string bad = good;
  bad[second + 12 + 5] ^= 0x01;  // data of record 1
  write_file(path, bad);
  check_error(EventReader::read_records(path).status(), Code::kDataLoss,
              fmt::format("record 1 at offset {} has corrupt data", second));

  bad = good;
  bad[second] ^= 0x01;  // its length
  write_file(path, bad);
  check_error(EventReader::read_records(path).status(), Code::kDataLoss, "corrupt length");

  bad = good;
  bad[second + 9] ^= 0x01;  // the CRC of its length
  write_file(path, bad);
  check_error(EventReader::read_records(path).status(), Code::kDataLoss, "corrupt length");

  bad = good;
  bad[good.size() - 1] ^= 0x80;  // the CRC of the last record's data
  write_file(path, bad);
  check_error(EventReader::read_records(path).status(), Code::kDataLoss, "record 3");

  for (size_t cut : {size_t{1}, size_t{4}, size_t{20}}) {
    write_file(path, good.substr(0, good.size() - cut));
    check_error(EventReader::read_records(path).status(), Code::kDataLoss, "truncated");
  }

  write_file(path, good);
  auto records = EventReader::read_records(path);
  BOOST_REQUIRE(records.ok());
  BOOST_TEST(records->size() == 4u);
  // A record whose CRCs are right but whose protobuf is not.
  check_error(EventReader::decode_event(bytes_of({0x2a, 0x05, 0x0a}), "test").status(),
              Code::kDataLoss, "runs past the message");
  check_error(EventReader::decode_event(bytes_of({0x08, 0x01}), "test").status(), Code::kDataLoss,
              "field 1 has wire type 0");

  check_error(EventReader::read_records(dir.file("absent")).status(), Code::kNotFound,
              "events.out.tfevents");
}

BOOST_AUTO_TEST_CASE(an_independent_python_reader_accepts_the_file) {
  if (std::system("python3 -c 'import struct' >/dev/null 2>&1") != 0) {
    BOOST_TEST_MESSAGE("skipped: no python3");
    return;
  }
  TempDir dir;
  auto writer = EventWriter::create(dir.file("logs"), ".py");
  BOOST_REQUIRE(writer.ok());
  std::ostringstream expected;
  expected << "file_version brain.Event:2\n";
  for (int step = -2; step < 40; ++step) {
    std::string tag = step % 2 == 0 ? "loss" : "accuracy/top1";
    float value = static_cast<float>(step) * 0.37f;
    BOOST_REQUIRE((*writer)->add_scalar(tag, step, value, 1.7e9 + step).ok());
    expected << fmt::format("{} {} {:08x} {:.1f}\n", tag, step, std::bit_cast<uint32_t>(value),
                            1.7e9 + step);
  }
  BOOST_REQUIRE((*writer)->flush().ok());

  // TFRecord framing with struct, its own table-free CRC32C, and protobuf decoded by hand.
  const std::string script = R"(import struct, sys

def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82f63b78 if crc & 1 else crc >> 1
    return crc ^ 0xffffffff

def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xa282ead8) & 0xffffffff

def varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]; i += 1
        value |= (b & 0x7f) << shift
        if not b & 0x80:
            return value, i
        shift += 7

def fields(buf):
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 1:
            value = buf[i:i + 8]; i += 8
        elif wire == 5:
            value = buf[i:i + 4]; i += 4
        elif wire == 2:
            n, i = varint(buf, i)
            value = buf[i:i + n]; i += n
        else:
            raise ValueError('wire type %d' % wire)
        yield number, wire, value

data = open(sys.argv[1], 'rb').read()
pos = 0
while pos < len(data):
    header = data[pos:pos + 8]
    (length,) = struct.unpack('<Q', header)
    (length_crc,) = struct.unpack('<I', data[pos + 8:pos + 12])
    assert length_crc == masked(crc32c(header)), 'length crc at %d' % pos
    payload = data[pos + 12:pos + 12 + length]
    (data_crc,) = struct.unpack('<I', data[pos + 12 + length:pos + 16 + length])
    assert data_crc == masked(crc32c(payload)), 'data crc at %d' % pos
    pos += 16 + length
    wall_time, step = 0.0, 0
    for number, wire, value in fields(payload):
        if number == 1:
            (wall_time,) = struct.unpack('<d', value)
        elif number == 2:
            step = value - (1 << 64) if value >= 1 << 63 else value
        elif number == 3:
            print('file_version', value.decode())
        elif number == 5:
            for n, _, v in fields(value):
                assert n == 1
                tag, bits = None, None
                for vn, _, vv in fields(v):
                    if vn == 1:
                        tag = vv.decode()
                    elif vn == 2:
                        (bits,) = struct.unpack('<I', vv)
                print('%s %d %08x %.1f' % (tag, step, bits, wall_time))
)";
  const std::string script_path = dir.file("read_events.py");
  write_file(script_path, script);
  std::string command = "python3 " + script_path + " " + (*writer)->path() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  BOOST_REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    output.append(buffer, n);
  int status = ::pclose(pipe);
  BOOST_TEST(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == 0, output);
  BOOST_TEST(output == expected.str());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
