// Tests of TFRecord files compressed as TensorFlow's TFRecordOptions compress them: ZLIB and
// GZIP files read back record by record (gzip members one after the other too), offsets in
// the uncompressed stream, an empty file holding no records, and a stream that is cut, of the
// other kind, or not compressed at all read as DataLoss naming the file.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "status_checks.hpp"
#include "troupe/graph/core/tfrecord.hpp"

namespace troupe {
using testing::check_error;

namespace {

std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("troupe_tfrecord_test_" + std::to_string(::getpid()) + "_" + name))
                               .string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::vector<std::string> read_all(const std::string& path, TFRecordCompression compression,
                                  Status* status, uint64_t* last_offset = nullptr) {
  std::vector<std::string> records;
  auto reader = TFRecordReader::open(path, "TFRecord file", compression);
  *status = reader.status();
  if (!reader.ok()) return records;
  for (;;) {
    std::string record;
    bool end = false;
    *status = reader->read(&record, &end);
    if (!status->ok() || end) break;
    records.push_back(record);
    if (last_offset != nullptr) *last_offset = reader->offset();
  }
  return records;
}

const std::string kRecords =
    tfrecord_frame("first") + tfrecord_frame(std::string(100000, 'x')) + tfrecord_frame("");

}  // namespace

BOOST_AUTO_TEST_SUITE(tfrecord_compression)

BOOST_AUTO_TEST_CASE(zlib_and_gzip_files_read_back_with_uncompressed_offsets) {
  for (auto compression : {TFRecordCompression::kZlib, TFRecordCompression::kGzip}) {
    const std::string path = write_file("round_trip", *tfrecord_compress(kRecords, compression));
    Status status;
    uint64_t offset = 0;
    auto records = read_all(path, compression, &status, &offset);
    BOOST_TEST(status.ok(), status.to_string());
    BOOST_TEST(records == (std::vector<std::string>{"first", std::string(100000, 'x'), ""}));
    BOOST_TEST(offset == kRecords.size());
    std::filesystem::remove(path);
  }
  // gzip members one after the other, as `cat a.gz b.gz` makes.
  const std::string members = *tfrecord_compress(tfrecord_frame("a"), TFRecordCompression::kGzip) +
                              *tfrecord_compress(tfrecord_frame("b"), TFRecordCompression::kGzip);
  const std::string path = write_file("members", members);
  Status status;
  BOOST_TEST(read_all(path, TFRecordCompression::kGzip, &status) ==
             (std::vector<std::string>{"a", "b"}));
  BOOST_TEST(status.ok(), status.to_string());
  std::filesystem::remove(path);
}

BOOST_AUTO_TEST_CASE(cut_wrong_or_uncompressed_streams_are_data_loss) {
  const std::string zlib = *tfrecord_compress(kRecords, TFRecordCompression::kZlib);
  const std::string cut = write_file("cut", zlib.substr(0, zlib.size() / 2));
  Status status;
  read_all(cut, TFRecordCompression::kZlib, &status);
  check_error(status, Code::kDataLoss, "the ZLIB stream is cut short");
  check_error(status, Code::kDataLoss, cut);
  const std::string wrong = write_file("wrong", zlib);
  read_all(wrong, TFRecordCompression::kGzip, &status);
  check_error(status, Code::kDataLoss, "is not a valid GZIP stream");
  const std::string plain = write_file("plain", kRecords);
  read_all(plain, TFRecordCompression::kZlib, &status);
  check_error(status, Code::kDataLoss, "is not a valid ZLIB stream");
  const std::string empty = write_file("empty", "");
  BOOST_TEST(read_all(empty, TFRecordCompression::kGzip, &status).empty());
  BOOST_TEST(status.ok(), status.to_string());
  for (const auto& path : {cut, wrong, plain, empty})
    std::filesystem::remove(path);
  check_error(parse_tfrecord_compression("BZIP2").status(), Code::kInvalidArgument,
              "compression_type 'BZIP2'");
  BOOST_TEST((*parse_tfrecord_compression("") == TFRecordCompression::kNone));
  BOOST_TEST((*parse_tfrecord_compression("GZIP") == TFRecordCompression::kGzip));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
