// DurableFile: a file written the way a database writes one, so that neither a crash nor a
// full disk ever leaves a partial file under its real name.
//
//   auto file = DurableFile::create("/ckpt/checkpoint");   // opens "/ckpt/checkpoint.tmp.<n>"
//   file->append(bytes);  ...                               // every write checked
//   TROUPE_RETURN_IF_ERROR(file->commit());                 // fsync, close, rename, fsync dir
//
// commit() makes the new contents durable and visible at once: the .tmp file is fsynced and
// closed (a failure at close, such as a delayed ENOSPC or EIO, is an error), renamed over the
// real name, and the directory is fsynced so the rename survives a power loss. Any failure is a
// Status with the errno's nearest TensorFlow code (ResourceExhausted for a full disk or quota)
// naming the file and the step that failed; the real name then still holds its previous
// contents and the .tmp file is removed (except when only the directory's fsync fails: the
// new contents are then in place, complete, but the rename may not survive a power loss). A
// DurableFile destroyed without commit() removes its .tmp file. Each DurableFile writes a .tmp
// file of its own ("<path>.tmp.<pid>.<n>"), so two writers of one path (two saves of one step)
// never write into each other's file: the last commit wins. A DurableFile is not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "troupe/graph/core/status.hpp"

namespace troupe {

class DurableFile {
 public:
  // Creates `path` + ".tmp.<pid>.<n>". NotFound when the directory does not exist.
  static StatusOr<std::unique_ptr<DurableFile>> create(const std::string& path);
  ~DurableFile();
  DurableFile(const DurableFile&) = delete;
  DurableFile& operator=(const DurableFile&) = delete;

  // Appends `bytes`. After a failure every later call returns that failure.
  Status append(std::string_view bytes);
  // Makes the appended bytes the file at `path`, durably (see above). Call at most once.
  Status commit();

  const std::string& path() const { return path_; }

 private:
  DurableFile(std::string path, std::string tmp, int fd);
  void discard();

  std::string path_;
  std::string tmp_;
  int fd_ = -1;
  Status status_;
  bool committed_ = false;
};

// The steps of a durable write, for tests that make each one fail in turn.
enum class DurableStep { kCreate, kWrite, kSync, kClose, kRename, kSyncDirectory };
const char* durable_step_name(DurableStep step);

// Tests only: when set, called before each step with the real file's path; a non-zero return
// is taken as that step's errno (the step is not performed). Not thread-safe against writers
// running at the same time; reset with an empty function.
void set_durable_fault_for_testing(std::function<int(DurableStep, const std::string& path)> fault);

// fsync of the directory `dir`. Some file systems cannot fsync a directory (EINVAL): that is
// not an error, as the rename is then as durable as the file system makes it.
Status sync_directory(const std::string& dir);

}  // namespace troupe
