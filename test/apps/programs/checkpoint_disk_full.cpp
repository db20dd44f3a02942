// Checkpoints on a disk that fills up: a test of its own (CTest checkpoint_disk_full), as it
// mounts a small tmpfs in a private mount namespace before any thread starts.
//
// With k pages left free, for every k from 0 to the pages of a whole save and a few more, a
// save runs on that file system: it fills at the data file's writes, at its close, at the
// index's, or not at all. Each save either succeeds or fails with ResourceExhausted; either
// way the newest complete checkpoint is the one latest_checkpoint names and the one a new
// chief restores (the data loss this guards against: an index left empty by a full disk and
// the next start at step 0). It must see failures in both the data file and the index, or
// it has not tested what it is for. It runs with a plain saver (the chief writes the data) and
// with a sharded one (each device's SaveV2 does).
//
// Exits 0 when every check holds, 1 naming the first that does not, 77 (skip) when this
// machine cannot make a mount namespace with a tmpfs (no user namespaces, no CAP_SYS_ADMIN).
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "troupe/actors/server.hpp"
#include "troupe/apps/training/monitored_session.hpp"
#include "troupe/apps/training/saver.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace {

using namespace troupe;
namespace fs = std::filesystem;

constexpr long kPage = 4096;
constexpr int kFileSystemPages = 160;
constexpr int kValues = 25'000;  // float32: 100,000 bytes, 25 pages with the .npz's headers

int skip(const std::string& why) {
  std::cout << "checkpoint_disk_full: skipped: " << why << std::endl;
  return 77;
}

int fail(const std::string& why) {
  std::cout << "checkpoint_disk_full: FAILED: " << why << std::endl;
  return 1;
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

// A mount namespace of this process's own, where a tmpfs mount is invisible to others.
std::string enter_mount_namespace() {
  if (::geteuid() == 0) {
    if (::unshare(CLONE_NEWNS) != 0) return std::string("unshare: ") + std::strerror(errno);
  } else {
    uid_t uid = ::geteuid();
    gid_t gid = ::getegid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
      return std::string("unshare of a user namespace: ") + std::strerror(errno);
    }
    if (!write_text("/proc/self/setgroups", "deny") ||
        !write_text("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
        !write_text("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1")) {
      return "cannot map this user into the new user namespace";
    }
  }
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return std::string("making mounts private: ") + std::strerror(errno);
  }
  return "";
}

// Fills the file system of `dir` but for `free_pages` pages, with the file `filler`.
bool leave_free(const std::string& filler, int free_pages) {
  int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::string block(kPage, 'x');
  off_t size = 0;
  while (::write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size()))
    size += kPage;
  bool ok = errno == ENOSPC && ::ftruncate(fd, size - free_pages * kPage) == 0;
  ::close(fd);
  return ok;
}

struct Model {
  Scope root = Scope::new_root();
  ModelVariable v = make_variable(root, "v", zeros(DataType::kFloat, TensorShape{kValues}));
  ModelVariable step = get_or_create_global_step(root);
  Output value = ops::Placeholder(root.with_op_name("value"), DataType::kFloat);
  Operation set = ops::Assign(root, v.ref, ops::Fill(root, {kValues}, value)).op();
};

// One pass over the free page counts with a plain or a sharded saver (whose SaveV2 kernel
// writes the data) in `dir`, emptied after.
int run(const std::string& dir, bool sharded) {
  Model m;
  auto server = value_or_throw(Server::create_local_server());
  Session session = value_or_throw(Session::create(server->target()));
  SaverOptions saver_options;
  saver_options.max_to_keep = 2;
  saver_options.sharded = sharded;
  Saver saver = value_or_throw(Saver::create(m.root, saver_options));
  throw_if_error(session.run_targets({global_variables_initializer(m.root)}));
  auto set_v = [&](float x) {
    throw_if_error(session.run_targets({m.set}, {{m.value, Tensor(x)}}));
  };
  auto v_now = [&] { return value_or_throw(session.run(m.v.ref)).data<float>()[kValues - 1]; };

  set_v(1);
  value_or_throw(saver.save(session, default_checkpoint_prefix(dir), 1));
  float saved = 1;
  int data_failures = 0, index_failures = 0, successes = 0;
  const std::string filler = (fs::path(dir) / "filler").string();
  for (int free_pages = 0; free_pages <= 30; ++free_pages) {
    int64_t step = free_pages + 2;
    set_v(static_cast<float>(step));
    if (!leave_free(filler, free_pages)) return fail("cannot fill the file system");
    StatusOr<std::string> result = saver.save(session, default_checkpoint_prefix(dir), step);
    fs::remove(filler);
    std::string outcome;
    if (result.ok()) {
      saved = static_cast<float>(step);
      ++successes;
      outcome = "saved";
    } else {
      if (result.status().code() != Code::kResourceExhausted) {
        return fail("a save on a full disk failed with " + result.status().to_string());
      }
      bool in_index =
          result.status().message().find("writing the checkpoint index") != std::string::npos;
      ++(in_index ? index_failures : data_failures);
      outcome = (in_index ? "failed writing the index: " : "failed writing the data: ") +
                result.status().to_string();
    }
    auto latest = latest_checkpoint(dir);
    if (!latest.ok() || !latest->has_value()) {
      return fail(std::to_string(free_pages) + " pages free: no checkpoint found after the save: " +
                  latest.status().to_string());
    }
    set_v(-1);
    throw_if_error(saver.restore(session, **latest));
    if (v_now() != saved) {
      return fail(std::to_string(free_pages) + " pages free: restored " + std::to_string(v_now()) +
                  ", the newest complete checkpoint holds " + std::to_string(saved));
    }
    std::cout << (sharded ? "sharded, " : "") << free_pages << " pages free: " << outcome
              << "; newest complete checkpoint " << fs::path(**latest).filename().string()
              << std::endl;
  }
  if (data_failures == 0 || index_failures == 0 || successes == 0) {
    return fail("did not see every case: " + std::to_string(data_failures) + " data, " +
                std::to_string(index_failures) + " index failures, " + std::to_string(successes) +
                " saves");
  }
  // A new chief on a new server restores the same.
  Model next;
  auto next_server = value_or_throw(Server::create_local_server());
  MonitoredTrainingSessionOptions options;
  options.master = next_server->target();
  options.checkpoint_dir = dir;
  options.save_checkpoint_secs = 0;
  auto chief = value_or_throw(MonitoredTrainingSession::create(next.root, options));
  float restored = value_or_throw(chief->session().run(next.v.ref)).data<float>()[0];
  if (restored != saved) return fail("a new chief restored " + std::to_string(restored));
  throw_if_error(chief->close(/*run_end_hooks=*/false));
  for (const auto& entry : fs::directory_iterator(dir))
    fs::remove_all(entry.path());
  std::cout << "checkpoint_disk_full: " << (sharded ? "sharded: " : "") << data_failures
            << " saves failed in the data, " << index_failures << " in the index, " << successes
            << " succeeded; the newest complete checkpoint was restored after each" << std::endl;
  return 0;
}

}  // namespace

int main() {
  // Before any thread starts: a user namespace needs a single-threaded process.
  if (std::string why = enter_mount_namespace(); !why.empty()) return skip(why);
  std::string dir = (fs::temp_directory_path() / "troupe-disk-full-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr)
    return fail("mkdtemp: " + std::string(std::strerror(errno)));
  std::string size = "size=" + std::to_string(kFileSystemPages * kPage);
  if (::mount("troupe-test", dir.c_str(), "tmpfs", 0, size.c_str()) != 0) {
    std::string why = std::string("cannot mount a tmpfs: ") + std::strerror(errno);
    fs::remove(dir);
    return skip(why);
  }
  int code;
  try {
    code = run(dir, /*sharded=*/false);
    if (code == 0) code = run(dir, /*sharded=*/true);
  } catch (const StatusError& e) {
    code = fail(e.status().to_string());
  }
  ::umount2(dir.c_str(), MNT_DETACH);
  fs::remove(dir);
  return code;
}
