// TensorBoard event files: CRC32C, TFRecord framing, hand-written Event protobufs, and the
// writer and reader built on them.
#include "troupe/graph/formats/event_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "troupe/graph/core/protobuf_wire.hpp"
#include "troupe/graph/formats/file_io.hpp"

namespace troupe {
namespace {

constexpr size_t kFlushThreshold = 64 * 1024;

using proto::kFixed32;
using proto::kFixed64;
using proto::kLengthDelimited;
using proto::kVarint;
using proto::ProtoReader;
using proto::put_bytes;
using proto::put_double;
using proto::put_float;
using proto::put_key;
using proto::put_varint;

// Event fields shared by every event: proto3 leaves out zero values.
std::string event_header(double wall_time, int64_t step) {
  std::string out;
  if (std::bit_cast<uint64_t>(wall_time) != 0) put_double(out, 1, wall_time);
  if (step != 0) {
    put_key(out, 2, kVarint);
    put_varint(out, static_cast<uint64_t>(step));  // negative: ten bytes, as int64 is
  }
  return out;
}

// Summary.Value: its tag and simple_value, if it has one.
Status decode_value(std::string_view data, const std::string& what, DecodedEvent* event) {
  ProtoReader r(data, what);
  std::string tag;
  bool has_simple = false;
  float simple = 0;
  while (!r.done()) {
    uint32_t field, type;
    TROUPE_RETURN_IF_ERROR(r.read_key(&field, &type));
    if (field == 1) {
      TROUPE_RETURN_IF_ERROR(r.expect(field, type, kLengthDelimited));
      std::string_view bytes;
      TROUPE_RETURN_IF_ERROR(r.read_bytes(&bytes));
      tag = std::string(bytes);
    } else if (field == 2) {
      TROUPE_RETURN_IF_ERROR(r.expect(field, type, kFixed32));
      uint64_t bits = 0;
      TROUPE_RETURN_IF_ERROR(r.read_fixed(4, &bits));
      simple = std::bit_cast<float>(static_cast<uint32_t>(bits));
      has_simple = true;
    } else {
      TROUPE_RETURN_IF_ERROR(r.skip(type));
    }
  }
  if (has_simple) event->scalars.emplace_back(std::move(tag), simple);
  return Status::OK();
}

Status decode_summary(std::string_view data, const std::string& what, DecodedEvent* event) {
  ProtoReader r(data, what);
  while (!r.done()) {
    uint32_t field, type;
    TROUPE_RETURN_IF_ERROR(r.read_key(&field, &type));
    if (field == 1) {
      TROUPE_RETURN_IF_ERROR(r.expect(field, type, kLengthDelimited));
      std::string_view value;
      TROUPE_RETURN_IF_ERROR(r.read_bytes(&value));
      TROUPE_RETURN_IF_ERROR(decode_value(value, what, event));
    } else {
      TROUPE_RETURN_IF_ERROR(r.skip(type));
    }
  }
  return Status::OK();
}

std::string hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace

std::string encode_file_version_event(double wall_time, std::string_view file_version) {
  std::string out = event_header(wall_time, 0);
  put_bytes(out, 3, file_version);
  return out;
}

std::string encode_scalar_event(double wall_time, int64_t step, std::string_view tag, float value) {
  std::string v;
  put_bytes(v, 1, tag);
  put_float(v, 2, value);
  std::string summary;
  put_bytes(summary, 1, v);
  std::string out = event_header(wall_time, step);
  put_bytes(out, 5, summary);
  return out;
}

std::string encode_graph_event(double wall_time, std::string_view graph_def) {
  std::string out = event_header(wall_time, 0);
  put_bytes(out, 4, graph_def);
  return out;
}

std::string encode_summary_event(double wall_time, int64_t step,
                                 std::string_view serialized_summary) {
  std::string out = event_header(wall_time, step);
  put_bytes(out, 5, serialized_summary);
  return out;
}

// ---- EventWriter --------------------------------------------------------------------------

double EventWriter::now() {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return static_cast<double>(us.count()) / 1e6;
}

StatusOr<std::unique_ptr<EventWriter>> EventWriter::create(const std::string& log_dir,
                                                           const std::string& suffix) {
  if (log_dir.empty()) return errors::InvalidArgument("EventWriter: empty log_dir");
  if (suffix.find('/') != std::string::npos) {
    return errors::InvalidArgument("EventWriter: suffix '{}' must not contain '/'", suffix);
  }
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  if (ec) return errno_status(ec.value(), "cannot create log directory", log_dir);
  double wall_time = now();
  const std::string name = (std::filesystem::path(log_dir) /
                            fmt::format("events.out.tfevents.{:010d}.{}{}",
                                        static_cast<int64_t>(wall_time), hostname(), suffix))
                               .string();
  // O_EXCL: a file is one writer's. A writer of the same host, suffix and second (a task
  // restarted within the second: in a container its pid, a common suffix, is the same) takes
  // the name with ".1", ".2", ... appended.
  constexpr int kMaxTries = 1000;
  std::string path = name;
  int fd = -1;
  for (int tries = 1;; ++tries) {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) break;
    const int err = errno;
    if (err != EEXIST || tries == kMaxTries) {
      return errno_status(err, "cannot create event file", path);
    }
    path = fmt::format("{}.{}", name, tries);
  }
  std::unique_ptr<EventWriter> writer(new EventWriter(path, fd));
  {
    std::lock_guard lock(writer->mu_);
    TROUPE_RETURN_IF_ERROR(
        writer->append_locked(encode_file_version_event(wall_time, kEventFileVersion)));
  }
  TROUPE_RETURN_IF_ERROR(writer->flush());
  return writer;
}

EventWriter::~EventWriter() {
  (void)flush();
  ::close(fd_);
}

Status EventWriter::add_scalar(const std::string& tag, int64_t step, double value,
                               double wall_time) {
  if (tag.empty()) {
    return errors::InvalidArgument("EventWriter '{}': empty tag for the scalar at step {}", path_,
                                   step);
  }
  std::lock_guard lock(mu_);
  return append_locked(encode_scalar_event(wall_time, step, tag, static_cast<float>(value)));
}

Status EventWriter::add_summary(std::string_view serialized_summary, int64_t step,
                                double wall_time) {
  const std::string what = fmt::format("the summary for step {} of '{}'", step, path_);
  proto::ProtoReader reader(serialized_summary, what);
  while (!reader.done()) {
    uint32_t field = 0;
    uint32_t type = 0;
    Status status = reader.read_key(&field, &type);
    if (status.ok()) status = reader.skip(type);
    if (!status.ok()) {
      return errors::InvalidArgument("not a serialized tf.Summary: {}", status.message());
    }
  }
  std::lock_guard lock(mu_);
  return append_locked(encode_summary_event(wall_time, step, serialized_summary));
}

Status EventWriter::add_graph(std::string_view graph_def, double wall_time) {
  std::lock_guard lock(mu_);
  return append_locked(encode_graph_event(wall_time, graph_def));
}

Status EventWriter::add_event(std::string_view serialized_event) {
  std::lock_guard lock(mu_);
  return append_locked(serialized_event);
}

Status EventWriter::append_locked(std::string_view event) {
  if (!error_.ok()) return error_;
  buffer_ += tfrecord_frame(event);
  if (buffer_.size() >= kFlushThreshold) return write_buffer_locked();
  return Status::OK();
}

Status EventWriter::write_buffer_locked() {
  if (!error_.ok()) return error_;
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = errno_status(errno, "cannot write event file", path_);
      return error_;
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
  return Status::OK();
}

Status EventWriter::flush() {
  std::lock_guard lock(mu_);
  TROUPE_RETURN_IF_ERROR(write_buffer_locked());
  if (::fsync(fd_) != 0) {
    error_ = errno_status(errno, "cannot fsync event file", path_);
    return error_;
  }
  return Status::OK();
}

// ---- EventReader --------------------------------------------------------------------------

StatusOr<std::vector<std::string>> EventReader::read_records(const std::string& path) {
  std::error_code ignored;
  if (!std::filesystem::exists(path, ignored)) {
    return errors::NotFound(
        "event file '{}' does not exist (EventWriter::path() names the file a writer created; "
        "a log directory holds events.out.tfevents.* files)",
        path);
  }
  TROUPE_ASSIGN_OR_RETURN(TFRecordReader reader, TFRecordReader::open(path, "event file"));
  std::vector<std::string> records;
  for (;;) {
    std::string record;
    bool end = false;
    TROUPE_RETURN_IF_ERROR(reader.read(&record, &end));
    if (end) return records;
    records.push_back(std::move(record));
  }
}

StatusOr<DecodedEvent> EventReader::decode_event(std::string_view data, const std::string& what) {
  DecodedEvent event;
  ProtoReader r(data, what);
  while (!r.done()) {
    uint32_t field, type;
    TROUPE_RETURN_IF_ERROR(r.read_key(&field, &type));
    if (field == 1) {
      TROUPE_RETURN_IF_ERROR(r.expect(field, type, kFixed64));
      uint64_t bits = 0;
      TROUPE_RETURN_IF_ERROR(r.read_fixed(8, &bits));
      event.wall_time = std::bit_cast<double>(bits);
    } else if (field == 2) {
      TROUPE_RETURN_IF_ERROR(r.expect(field, type, kVarint));
      uint64_t v = 0;
      TROUPE_RETURN_IF_ERROR(r.read_varint(&v));
      event.step = static_cast<int64_t>(v);
    } else if (field == 3) {
      TROUPE_RETURN_IF_ERROR(r.expect(field, type, kLengthDelimited));
      std::string_view bytes;
      TROUPE_RETURN_IF_ERROR(r.read_bytes(&bytes));
      event.file_version = std::string(bytes);
    } else if (field == 5) {
      TROUPE_RETURN_IF_ERROR(r.expect(field, type, kLengthDelimited));
      std::string_view summary;
      TROUPE_RETURN_IF_ERROR(r.read_bytes(&summary));
      TROUPE_RETURN_IF_ERROR(decode_summary(summary, what, &event));
    } else {
      TROUPE_RETURN_IF_ERROR(r.skip(type));
    }
  }
  return event;
}

StatusOr<std::vector<DecodedEvent>> EventReader::read_events(const std::string& path) {
  TROUPE_ASSIGN_OR_RETURN(std::vector<std::string> records, read_records(path));
  std::vector<DecodedEvent> events;
  events.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    TROUPE_ASSIGN_OR_RETURN(
        DecodedEvent event,
        decode_event(records[i], fmt::format("event file '{}', record {}", path, i)));
    events.push_back(std::move(event));
  }
  return events;
}

StatusOr<std::vector<ScalarEvent>> EventReader::read_scalars(const std::string& path) {
  TROUPE_ASSIGN_OR_RETURN(std::vector<DecodedEvent> events, read_events(path));
  std::vector<ScalarEvent> scalars;
  for (DecodedEvent& event : events) {
    for (auto& [tag, value] : event.scalars) {
      scalars.push_back({event.wall_time, event.step, std::move(tag), value});
    }
  }
  return scalars;
}

}  // namespace troupe
