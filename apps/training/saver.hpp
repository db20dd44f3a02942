// Saver: checkpoints of a model's variables as NumPy .npz files (docs/checkpoints.md).
//
// save() fetches every variable through the session — from whichever tasks hold them — and
// writes "<dir>/model.ckpt-<step>.npz", one array per variable named after its node, then
// updates the index file "<dir>/checkpoint" (TensorFlow's format), then deletes checkpoints
// beyond the newest max_to_keep. Each file is written durably (fsynced, renamed, directory
// fsynced) and the index only after the file it names, so no failure leaves an index naming
// a missing or partial file; a failure is the save's error (ResourceExhausted for a full disk).
// restore() feeds a checkpoint's arrays to assign ops built next to each variable. numpy.load()
// reads the files directly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "troupe/actors/session.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe {

class Saver {
 public:
  // Builds the restore ops for every variable recorded in `scope`'s graph (build it after the
  // model, before the session first runs).
  static StatusOr<Saver> create(const Scope& scope, int max_to_keep = 5);

  // Writes the checkpoint for `global_step`; returns its path.
  StatusOr<std::string> save(Session& session, const std::string& dir, int64_t global_step);
  // Assigns every variable from the checkpoint at `path`. NotFound naming a variable the file
  // lacks, InvalidArgument for a dtype or shape that differs.
  Status restore(Session& session, const std::string& path) const;

  const std::vector<std::string>& variable_names() const { return names_; }

 private:
  Saver() = default;
  std::vector<std::string> names_;
  std::vector<Output> variables_;
  std::vector<Output> placeholders_;
  Operation restore_all_;
  int max_to_keep_ = 5;
};

// Readies `dir` for the chief, the only writer, before it writes: removes what a writer
// that died mid-save left ("<name>-N.npz.tmp", "checkpoint.tmp"; complete files are renamed into
// place, so these are never read), and rewrites a missing, empty or damaged index from the
// complete checkpoints on disk (checkpoint_index.hpp), saying so. OK when `dir` does not exist.
Status prepare_checkpoint_directory(const std::string& dir);

// The newest checkpoint of `dir`: the one its index names, or, when the index is missing,
// damaged or names a file that is gone, the newest complete checkpoint file on disk (with a
// warning). nullopt if there is none.
StatusOr<std::optional<std::string>> latest_checkpoint(const std::string& dir);

}  // namespace troupe
