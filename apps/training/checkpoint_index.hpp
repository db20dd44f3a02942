// The checkpoint index: the file "checkpoint" beside the checkpoints, in TensorFlow's text
// format (tf.train.CheckpointState), saying which checkpoints a directory holds, newest last:
//
//   model_checkpoint_path: "model.ckpt-7031.npz"
//   all_model_checkpoint_paths: "model.ckpt-6800.npz"
//   all_model_checkpoint_paths: "model.ckpt-7031.npz"
//
// A sharded checkpoint (graph/formats/checkpoint_files.hpp) is listed by its prefix
// ("model.ckpt-7031", its files being "model.ckpt-7031.shard-00000-of-00002.npz", ...).
// Paths are written relative to the directory; absolute ones (as TensorFlow writes) are read.
// The index is written durably (durable_file.hpp) and only after the checkpoint it names is.
// A missing, empty, unparseable index, or one naming a file that is not there, does not lose
// the checkpoints on disk: recover_checkpoint_state() rebuilds the list from the complete
// checkpoint files in the directory ("<prefix>-<step>.npz", or a complete set of shards;
// complete files are the only ones under their real name, as checkpoints are renamed into place
// once written and synced).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "troupe/graph/core/status.hpp"

namespace troupe {

struct CheckpointState {
  // The newest checkpoint, as written in the index (relative to its directory, or absolute).
  std::string model_checkpoint_path;
  // Every checkpoint kept, oldest first; the newest is last.
  std::vector<std::string> all_model_checkpoint_paths;
};

inline constexpr const char* kCheckpointIndexFile = "checkpoint";

// The index of `dir` as written: nullopt when there is none. DataLoss (naming the file and the
// line) when it is empty or not in the format above.
StatusOr<std::optional<CheckpointState>> read_checkpoint_index(const std::string& dir);

// Writes the index of `dir` durably; `state` must name at least one checkpoint.
Status write_checkpoint_index(const std::string& dir, const CheckpointState& state);

// The checkpoints of `dir` ("<prefix>-<step>.npz", or "<prefix>-<step>" for a complete set of
// shards), by step, oldest first: names relative
// to `dir`. OK and empty when `dir` does not exist.
StatusOr<std::vector<std::string>> checkpoint_files_on_disk(const std::string& dir);

// What the directory holds, for reading and for the next save: the index when it is intact and
// its newest checkpoint exists; otherwise (no index but checkpoint files, an empty or damaged
// index, a newest entry whose file is gone) the list rebuilt from the files on disk, the newest
// one that reads as a whole checkpoint last, with a warning saying what was wrong and what is
// used instead. nullopt when the directory has no checkpoint. `rebuilt`, if given, says
// whether the index was rebuilt (the caller that writes the directory then rewrites it).
StatusOr<std::optional<CheckpointState>> recover_checkpoint_state(const std::string& dir,
                                                                  bool* rebuilt = nullptr);

// `path` of an index entry made a path that opens: itself when absolute, else under `dir`.
std::string checkpoint_path_in(const std::string& dir, const std::string& path);

}  // namespace troupe
