// The shared ring: a page of control (the nonce, then the writer's and the reader's slot
// counters on cache lines of their own) followed by the slots. Counters only grow (mod 2^32);
// slot i lives at i % kSlots.
#include "troupe/actors/transport/shared_ring.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <random>

#include <fmt/core.h>

namespace troupe {
namespace {

static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert((SharedRing::kSlots & (SharedRing::kSlots - 1)) == 0,
              "slot numbers wrap at 2^32: kSlots must divide it");

constexpr size_t kControlBytes = 4096;

size_t segment_bytes(uint32_t slots, uint32_t slot_bytes) {
  return kControlBytes + size_t{slots} * slot_bytes;
}

// Sleeps while `word` holds `seen`, 10 ms at most; true if the time ran out.
bool futex_wait(std::atomic<uint32_t>& word, uint32_t seen) {
  timespec slice{0, 10'000'000};
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, seen, &slice, nullptr,
                 0) != 0 &&
         errno == ETIMEDOUT;
}

void futex_wake(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Waits until `ready(counter)` holds; false if `give_up` says so after a slice without change.
template <typename Ready>
bool wait_for(std::atomic<uint32_t>& counter, Ready ready, const SharedRing::GiveUp& give_up) {
  for (;;) {
    uint32_t seen = counter.load(std::memory_order_acquire);
    if (ready(seen)) return true;
    if (futex_wait(counter, seen) && give_up()) return false;
  }
}

}  // namespace

struct SharedRing::Control {
  Nonce nonce;
  alignas(64) std::atomic<uint32_t> head{0};  // slots filled by the writer
  alignas(64) std::atomic<uint32_t> tail{0};  // slots emptied by the reader
};

SharedRing::SharedRing(std::string name, void* memory, size_t bytes)
    : name_(std::move(name)),
      memory_(memory),
      bytes_(bytes),
      control_(static_cast<Control*>(memory)),
      slots_(static_cast<char*>(memory) + kControlBytes) {}

SharedRing::~SharedRing() {
  munmap(memory_, bytes_);
}

StatusOr<std::unique_ptr<SharedRing>> SharedRing::create() {
  static std::atomic<uint64_t> created{0};
  std::random_device random;
  Nonce nonce;
  for (auto& byte : nonce)
    byte = static_cast<uint8_t>(random());
  std::string name = fmt::format("/troupe-{}-{}-{:02x}{:02x}{:02x}{:02x}", getpid(), created++,
                                 nonce[0], nonce[1], nonce[2], nonce[3]);
  size_t bytes = segment_bytes(kSlots, kSlotBytes);
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return errors::Unavailable("shared memory {}: cannot create: {}", name, std::strerror(errno));
  }
  // Reserved now: on a full tmpfs, touching an unreserved page would be SIGBUS, not an error.
  if (int error = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); error != 0) {
    close(fd);
    shm_unlink(name.c_str());
    return errors::Unavailable("shared memory {}: cannot reserve {} bytes: {}", name, bytes,
                               std::strerror(error));
  }
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  int map_error = errno;
  close(fd);
  if (memory == MAP_FAILED) {
    shm_unlink(name.c_str());
    return errors::Unavailable("shared memory {}: cannot map: {}", name, std::strerror(map_error));
  }
  static_assert(sizeof(Control) <= kControlBytes);
  std::unique_ptr<SharedRing> ring(new SharedRing(name, memory, bytes));
  new (memory) Control{nonce};
  return ring;
}

StatusOr<std::unique_ptr<SharedRing>> SharedRing::open(const std::string& name, const Nonce& nonce,
                                                       uint32_t slots, uint32_t slot_bytes) {
  if (slots != kSlots || slot_bytes != kSlotBytes) {
    return errors::InvalidArgument(
        "shared memory {}: {} slots of {} bytes (this build has {} of {})", name, slots, slot_bytes,
        kSlots, kSlotBytes);
  }
  // Only names this class makes: a peer cannot point us at other files.
  if (!name.starts_with("/troupe-") || name.find('/', 1) != std::string::npos ||
      name.size() > 255) {
    return errors::InvalidArgument("shared memory name '{}' is not a troupe ring's", name);
  }
  size_t bytes = segment_bytes(slots, slot_bytes);
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) {
    return errors::NotFound("shared memory {}: cannot open: {}", name, std::strerror(errno));
  }
  struct stat status {};
  if (fstat(fd, &status) != 0 || static_cast<size_t>(status.st_size) != bytes) {
    close(fd);
    return errors::InvalidArgument("shared memory {}: not {} bytes", name, bytes);
  }
  // create() makes a segment this user owns and no one else may open (0600): one that another
  // user owns, or that others could open, was not made by a peer and is not used.
  if (status.st_uid != geteuid() || (status.st_mode & 077) != 0) {
    close(fd);
    return errors::PermissionDenied(
        "shared memory {}: owned by uid {} with mode {:04o}; a ring must be this process's "
        "user's (uid {}) with mode 0600",
        name, status.st_uid, status.st_mode & 07777, geteuid());
  }
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  int map_error = errno;
  close(fd);
  if (memory == MAP_FAILED) {
    return errors::Unavailable("shared memory {}: cannot map: {}", name, std::strerror(map_error));
  }
  std::unique_ptr<SharedRing> ring(new SharedRing(name, memory, bytes));
  if (ring->nonce() != nonce) {
    return errors::NotFound("shared memory {}: another segment of that name", name);
  }
  return ring;
}

const SharedRing::Nonce& SharedRing::nonce() const {
  return control_->nonce;
}

void SharedRing::unlink() {
  shm_unlink(name_.c_str());
}

bool SharedRing::write(const void* data, size_t bytes, const GiveUp& give_up) {
  auto* from = static_cast<const char*>(data);
  uint32_t head = control_->head.load(std::memory_order_relaxed);  // only this side moves it
  while (bytes > 0) {
    if (!wait_for(
            control_->tail, [&](uint32_t tail) { return head - tail < kSlots; }, give_up)) {
      return false;
    }
    size_t take = std::min<size_t>(bytes, kSlotBytes);
    std::memcpy(slots_ + size_t{head % kSlots} * kSlotBytes, from, take);
    control_->head.store(++head, std::memory_order_release);
    futex_wake(control_->head);
    from += take;
    bytes -= take;
  }
  return true;
}

bool SharedRing::read(void* data, size_t bytes, const GiveUp& give_up) {
  auto* to = static_cast<char*>(data);
  uint32_t tail = control_->tail.load(std::memory_order_relaxed);  // only this side moves it
  while (bytes > 0) {
    if (!wait_for(
            control_->head, [&](uint32_t head) { return head != tail; }, give_up)) {
      return false;
    }
    size_t take = std::min<size_t>(bytes, kSlotBytes);
    std::memcpy(to, slots_ + size_t{tail % kSlots} * kSlotBytes, take);
    control_->tail.store(++tail, std::memory_order_release);
    futex_wake(control_->tail);
    to += take;
    bytes -= take;
  }
  return true;
}

}  // namespace troupe
