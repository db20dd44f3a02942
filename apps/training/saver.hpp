// Saver: checkpoints of a model's variables as NumPy .npz files (docs/checkpoints.md).
//
// save() fetches every variable through the session — from whichever tasks hold them — and
// writes "<dir>/model.ckpt-<step>.npz", one array per variable named after its node, then
// updates the index file "<dir>/checkpoint" (TensorFlow's format) and deletes checkpoints
// beyond the newest max_to_keep. restore() feeds a checkpoint's arrays to assign ops built next
// to each variable. numpy.load() reads the files directly.
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

// Removes what a writer that died mid-save left in `dir`: "model.ckpt-N.npz.tmp" and
// "checkpoint.tmp" (complete files are renamed into place, so these are never read). Only the
// chief, which is the only writer, calls it, before it writes. OK when `dir` does not exist.
Status remove_unfinished_checkpoints(const std::string& dir);

// The newest checkpoint recorded in "<dir>/checkpoint", or nullopt if there is none.
// DataLoss if the index names a file that is missing.
StatusOr<std::optional<std::string>> latest_checkpoint(const std::string& dir);

}  // namespace troupe
