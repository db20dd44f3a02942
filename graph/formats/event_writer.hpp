// TensorBoard event files: writing scalar summaries as TensorFlow does, and reading them back.
//
// Owns the file format, done by hand (no protobuf or TensorFlow library):
//  - TFRecord framing, per record: uint64 length (little-endian), uint32 masked CRC32C of those
//    8 bytes, the data, uint32 masked CRC32C of the data.
//  - Data: a serialized tensorflow.Event protobuf —
//      Event   { double wall_time = 1; int64 step = 2;
//                oneof what { string file_version = 3; Summary summary = 5; } }
//      Summary { repeated Value value = 1; }
//      Value   { string tag = 1; oneof value { float simple_value = 2; ... } }
//    wall_time and step are left out when zero, as proto3 serialisers do; simple_value, being
//    in a oneof, is always written.
//  - The first record of a file is Event{wall_time, file_version: "brain.Event:2"}.
// TensorBoard and tf.compat.v1.train.summary_iterator read what EventWriter writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tfrecord.hpp"

namespace troupe {

// Serialized Event protobufs.
std::string encode_file_version_event(double wall_time, std::string_view file_version);
std::string encode_scalar_event(double wall_time, int64_t step, std::string_view tag, float value);
// An Event holding `graph_def`, a serialized tensorflow.GraphDef (TensorBoard's graph tab).
std::string encode_graph_event(double wall_time, std::string_view graph_def);
// An Event at `step` whose summary is `serialized_summary` (a tensorflow.Summary's bytes).
std::string encode_summary_event(double wall_time, int64_t step,
                                 std::string_view serialized_summary);

inline constexpr const char* kEventFileVersion = "brain.Event:2";

// Writes one event file. Records are buffered and written to the file when 64 KiB have
// gathered, by flush(), and by the destructor. Thread-safe: several threads may add scalars.
// After a failed write every later call returns that error.
class EventWriter {
 public:
  // Creates log_dir (with parents) if missing and in it the file
  // "events.out.tfevents.<unix seconds, 10 digits>.<hostname><suffix>", TensorFlow's name,
  // then writes and flushes the file_version record. Where that file exists (another writer of
  // the same host and suffix in the same second), the name gets ".1", ".2", ... appended, so
  // every writer has a file of its own (TensorBoard reads every events file of a directory).
  // InvalidArgument for a suffix with '/'; other failures with the errno's nearest code, naming
  // the path.
  static StatusOr<std::unique_ptr<EventWriter>> create(const std::string& log_dir,
                                                       const std::string& suffix = "");
  ~EventWriter();  // flushes; errors are lost (call flush() to see them)
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // Adds the scalar `value` (stored as float32, Value.simple_value) for `tag` at `step`.
  // InvalidArgument for an empty tag.
  Status add_scalar(const std::string& tag, int64_t step, double value, double wall_time = now());
  // Adds a serialized tensorflow.Summary (what a summary op computes: tf.summary.merge_all's
  // value) as the summary of an Event at `step`. InvalidArgument, naming the file, when the
  // bytes are not a well-formed protocol buffer message.
  Status add_summary(std::string_view serialized_summary, int64_t step, double wall_time = now());
  // Adds the serialized tensorflow.GraphDef `graph_def` (encode_tensorflow_graph_def's).
  Status add_graph(std::string_view graph_def, double wall_time = now());
  // Adds a serialized tensorflow.Event (a summary, a graph, a session log, ...), as is.
  Status add_event(std::string_view serialized_event);
  // Writes buffered records and fsyncs the file.
  Status flush();
  const std::string& path() const { return path_; }

  // Seconds since the Unix epoch, with microseconds: Event.wall_time's clock.
  static double now();

 private:
  EventWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status append_locked(std::string_view event);
  Status write_buffer_locked();

  const std::string path_;
  std::mutex mu_;
  int fd_;
  std::string buffer_;
  Status error_;
};

// One decoded Event. `file_version` is empty unless the event carried one; `scalars` holds
// its summary's simple_value entries (other kinds of summary value are skipped).
struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  std::vector<std::pair<std::string, float>> scalars;
};

// One scalar of an event file, flattened.
struct ScalarEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string tag;
  float value = 0;
};

// Reads event files, verifying every record's two CRCs.
class EventReader {
 public:
  // The payloads of the TFRecord file at `path`. NotFound for a missing file; DataLoss naming
  // the file, record and offset for a CRC mismatch or a truncated record.
  static StatusOr<std::vector<std::string>> read_records(const std::string& path);
  // Decodes a serialized Event. DataLoss (naming `what`) for malformed protobuf.
  static StatusOr<DecodedEvent> decode_event(std::string_view data, const std::string& what);
  // Every event of the file at `path`, in order (the first is normally the file_version).
  static StatusOr<std::vector<DecodedEvent>> read_events(const std::string& path);
  // Every scalar of the file at `path`, in order.
  static StatusOr<std::vector<ScalarEvent>> read_scalars(const std::string& path);
};

}  // namespace troupe
