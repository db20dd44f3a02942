// DurableFile: write to .tmp, fsync, close, rename, fsync the directory; every step checked.
#include "troupe/graph/formats/durable_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "troupe/graph/formats/file_io.hpp"

namespace troupe {
namespace {

std::mutex fault_mutex;
std::function<int(DurableStep, const std::string&)> injected_fault;

// The errno a test injects for `step` of writing `path`, or 0.
int injected(DurableStep step, const std::string& path) {
  std::function<int(DurableStep, const std::string&)> fault;
  {
    std::lock_guard lock(fault_mutex);
    fault = injected_fault;
  }
  return fault ? fault(step, path) : 0;
}

std::string parent_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

const char* durable_step_name(DurableStep step) {
  switch (step) {
    case DurableStep::kCreate:
      return "create";
    case DurableStep::kWrite:
      return "write";
    case DurableStep::kSync:
      return "fsync";
    case DurableStep::kClose:
      return "close";
    case DurableStep::kRename:
      return "rename";
    case DurableStep::kSyncDirectory:
      return "fsync the directory of";
  }
  return "?";
}

void set_durable_fault_for_testing(std::function<int(DurableStep, const std::string&)> fault) {
  std::lock_guard lock(fault_mutex);
  injected_fault = std::move(fault);
}

namespace {

// A temporary name no other writer of `path` in any process uses.
std::string temporary_name(const std::string& path) {
  static std::atomic<uint64_t> next{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(next++);
}

}  // namespace

StatusOr<std::unique_ptr<DurableFile>> DurableFile::create(const std::string& path) {
  const std::string tmp = temporary_name(path);
  int err = injected(DurableStep::kCreate, path);
  int fd = -1;
  if (err == 0) {
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) err = errno;
  }
  if (err != 0) {
    return errno_status(err, "cannot create", tmp,
                        err == ENOENT ? " (does its directory exist?)" : "");
  }
  return std::unique_ptr<DurableFile>(new DurableFile(path, tmp, fd));
}

DurableFile::DurableFile(std::string path, std::string tmp, int fd)
    : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}

DurableFile::~DurableFile() {
  if (!committed_) discard();
}

void DurableFile::discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
}

Status DurableFile::append(std::string_view bytes) {
  if (!status_.ok()) return status_;
  if (fd_ < 0) return status_ = errors::FailedPrecondition("'{}' is already committed", path_);
  if (int err = injected(DurableStep::kWrite, path_); err != 0) {
    return status_ = errno_status(err, "cannot write", tmp_);
  }
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return status_ = errno_status(errno, "cannot write", tmp_);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::OK();
}

Status DurableFile::commit() {
  if (!status_.ok()) {
    discard();
    return status_;
  }
  if (fd_ < 0) return errors::FailedPrecondition("'{}' is already committed", path_);
  // Each step runs only if the ones before it succeeded.
  auto step = [&](DurableStep which, auto&& perform) -> Status {
    int err = injected(which, path_);
    if (err == 0 && perform() != 0) err = errno;
    if (err == 0) return Status::OK();
    std::string action = std::string("cannot ") + durable_step_name(which);
    return errno_status(err, action, which == DurableStep::kRename ? path_ : tmp_);
  };
  Status status = step(DurableStep::kSync, [&] { return ::fsync(fd_); });
  if (status.ok()) {
    // close() reports what a file system defers (NFS and some quota setups report ENOSPC
    // here); the descriptor is released whatever it returns.
    int fd = fd_;
    fd_ = -1;
    status = step(DurableStep::kClose, [&] { return ::close(fd); });
  }
  if (status.ok()) {
    status = step(DurableStep::kRename, [&] { return std::rename(tmp_.c_str(), path_.c_str()); });
  }
  if (!status.ok()) {
    discard();
    status_ = status;
    return status;
  }
  committed_ = true;
  if (int err = injected(DurableStep::kSyncDirectory, path_); err != 0) {
    return status_ = errno_status(err, "cannot fsync the directory of", path_);
  }
  return status_ = sync_directory(parent_of(path_));
}

Status sync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_status(errno, "cannot open directory", dir);
  int result = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (result != 0 && err != EINVAL) return errno_status(err, "cannot fsync directory", dir);
  return Status::OK();
}

}  // namespace troupe
