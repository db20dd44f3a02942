// Saver: checkpoints of a model's variables as NumPy .npz files (docs/checkpoints.md), with
// tf.train.Saver's naming: save(session, "/dir/model.ckpt", 7) writes "/dir/model.ckpt-7.npz"
// (without a step: "/dir/model.ckpt.npz").
//
// save() fetches the variables through the session — from whichever tasks hold them — and
// writes one array per variable, named by its checkpoint name (its node's name unless
// SaverOptions::var_list says otherwise; for the shards of a partitioned variable, whose
// VariableRecords carry a VariableSlice, the whole variable under its full name, assembled
// from the shards, as TensorFlow saves it), then updates the index file "checkpoint" of the
// directory (TensorFlow's format), then deletes the checkpoints beyond the newest max_to_keep
// (keeping one every keep_checkpoint_every_n_hours). Each file is written durably (fsynced,
// renamed, directory fsynced) and the index only after the file it names, so no failure leaves
// an index naming a missing or partial file; a failure is the save's error (ResourceExhausted
// for a full disk). restore() feeds a checkpoint's arrays to assign ops built next to each
// variable (each shard its slice of the whole: a checkpoint restores into any partitioning).
// numpy.load() reads the files directly.
//
// A sharded saver (SaverOptions::sharded, tf.train.Saver(sharded=True)) moves no variable
// through the session's task: each device holding variables runs a SaveV2 op that writes its
// own variables (a partitioned variable's shards as slices of the whole) to
// "<save_path>-<step>.shard-<i>-of-<n>.npz", and restore runs RestoreV2 ops there
// (graph/formats/checkpoint_files.hpp). As with TensorFlow's sharded saver, every task must see
// the checkpoint directory (a shared volume); the saver checks that it sees every shard written
// before it names the checkpoint in the index. Either saver restores either kind of checkpoint.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "troupe/actors/session.hpp"
#include "troupe/apps/training/checkpoint_index.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe {

// The checkpoint prefix MonitoredTrainingSession and troupe train use: "<dir>/model.ckpt".
std::string default_checkpoint_prefix(const std::string& dir);

struct SaverOptions {
  // How many checkpoints to keep; 0 (TensorFlow's None or 0): all.
  int max_to_keep = 5;
  // Of the checkpoints max_to_keep drops, one per this many hours is kept.
  double keep_checkpoint_every_n_hours = 10000.0;
  // The variables to save, as (name in the checkpoint, Variable node name); empty: every
  // variable of the graph under its node's name (a shard under its whole variable's name).
  // A name may be given for several variables only if they are the shards of one variable.
  std::vector<std::pair<std::string, std::string>> var_list;
  // Write one file per device holding variables, on that device's task (see above).
  bool sharded = false;
};

class Saver {
 public:
  // Builds the restore ops for the variables (build it after the model, before the session
  // first runs). InvalidArgument for a negative max_to_keep, a var_list naming a node that is
  // not a variable or a checkpoint name twice (other than for the shards of one variable),
  // shards that do not tile their whole variable exactly, or a graph without variables.
  static StatusOr<Saver> create(const Scope& scope, SaverOptions options = {});

  // Writes the checkpoint of `save_path` ("<dir>/<name>") at `global_step`: returns the path
  // of the file written ("<save_path>-<step>.npz", or "<save_path>.npz"), or for a sharded
  // saver the checkpoint's prefix ("<save_path>-<step>"). A sharded save whose files this task
  // does not see is FailedPrecondition saying the directory must be shared.
  StatusOr<std::string> save(Session& session, const std::string& save_path,
                             std::optional<int64_t> global_step);
  // Assigns every variable from the checkpoint at `path`, its prefix or its ".npz" (one file
  // or a set of shards, whichever saver wrote it).
  // NotFound naming the file, or a variable the file lacks; InvalidArgument for a dtype or
  // shape that differs.
  Status restore(Session& session, const std::string& path) const;

  // The checkpoint names, in the order saved.
  const std::vector<std::string>& variable_names() const { return names_; }

 private:
  Saver() = default;
  // One variable of the checkpoint: a whole variable, or the shards of a partitioned one.
  struct Part {
    Output variable;
    Output placeholder;
    std::vector<int64_t> offset;  // where the shard starts in the whole (empty: not a shard)
  };
  struct Entry {
    std::string name;
    std::vector<Part> parts;
    std::vector<int64_t> full_shape;  // of the whole, for shards
  };
  // The variables of one device, for a sharded saver: saved and restored there.
  struct DeviceShard {
    Output prefix;  // fed "<checkpoint prefix>.shard-<i>-of-<n>" (save) or the prefix (restore)
    Operation save;
  };
  static Status add_part(Entry& entry, const Output& variable, const VariableRecord* record);
  static Status check_tiling(const Entry& entry);
  Status build_sharded(const Scope& save);
  Status write_shards(Session& session, const std::string& prefix,
                      const std::vector<std::string>& files);
  StatusOr<std::string> index_checkpoint(const std::string& dir, const std::string& file,
                                         const std::vector<std::string>& data_files,
                                         std::optional<CheckpointState> previous, Status saved);

  std::vector<std::string> names_;
  std::vector<Entry> entries_;
  Operation restore_all_;
  std::vector<DeviceShard> shards_;
  Operation restore_shards_;
  SaverOptions options_;
  // When this saver last kept a checkpoint for keep_checkpoint_every_n_hours, and when it
  // wrote each checkpoint it wrote (others count as written when this saver was made).
  std::chrono::system_clock::time_point created_ = std::chrono::system_clock::now();
  std::chrono::system_clock::time_point last_preserved_ = created_;
  std::map<std::string, std::chrono::system_clock::time_point> saved_at_;
};

// Readies `dir` for the chief, the only writer, before it writes: removes what a writer
// that died mid-save left ("<name>-N.npz.tmp", "<name>-N.shard-I-of-N.npz.tmp", "checkpoint.tmp"
// — each with the writer's ".<pid>.<n>"; complete files are renamed into
// place, so these are never read), and rewrites a missing, empty or damaged index from the
// complete checkpoints on disk (checkpoint_index.hpp), saying so. OK when `dir` does not exist.
Status prepare_checkpoint_directory(const std::string& dir);

// The newest checkpoint of `dir`: the one its index names, or, when the index is missing,
// damaged or names a file that is gone, the newest complete checkpoint file on disk (with a
// warning). nullopt if there is none.
StatusOr<std::optional<std::string>> latest_checkpoint(const std::string& dir);

}  // namespace troupe
