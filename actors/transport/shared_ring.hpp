// SharedRing: a ring of slots in a POSIX shared-memory segment through which one thread of a
// process hands bytes to one thread of another process on the same host: the tensor channel's
// same-host path (actors/transport/tensor_channel.hpp, docs/wire.md).
//
// The writer copies a tensor's bytes into free slots while the reader copies full ones out into
// the new tensor, both at memory speed and in parallel; loopback TCP copies as often but through
// the kernel's network stack. Each side sleeps on a futex in the segment, in short slices, and
// asks its caller between them whether to give up: a peer that dies or a stop never hangs it.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "troupe/graph/core/status.hpp"

namespace troupe {

class SharedRing {
 public:
  static constexpr uint32_t kSlots = 8;
  static constexpr uint32_t kSlotBytes = 256 * 1024;
  using Nonce = std::array<uint8_t, 16>;

  // A new segment with a name of its own (under /dev/shm on Linux), its memory reserved now:
  // Unavailable if the host cannot give it (no /dev/shm, or too small), never a fault later.
  static StatusOr<std::unique_ptr<SharedRing>> create();
  // The segment another process created as `name`, if it is there and holds `nonce` (proof
  // that both processes see the same one: not so from another container of the same host).
  // `slots` and `slot_bytes` must be this build's. PermissionDenied for a segment another
  // user owns or that others may open (create() makes it this user's, mode 0600).
  static StatusOr<std::unique_ptr<SharedRing>> open(const std::string& name, const Nonce& nonce,
                                                    uint32_t slots, uint32_t slot_bytes);
  ~SharedRing();
  SharedRing(const SharedRing&) = delete;
  SharedRing& operator=(const SharedRing&) = delete;

  const std::string& name() const { return name_; }
  const Nonce& nonce() const;
  // Removes the name (the memory stays until both sides unmap it). The creator calls it once
  // the peer has opened the segment or declined.
  void unlink();

  // Whether to stop waiting for the peer; asked every few milliseconds while waiting.
  using GiveUp = std::function<bool()>;
  // Copies `bytes` from `data` into the ring, as the reader frees slots; false if `give_up`
  // said so first.
  bool write(const void* data, size_t bytes, const GiveUp& give_up);
  // Copies the next `bytes` written into `data`; false if `give_up` said so first.
  bool read(void* data, size_t bytes, const GiveUp& give_up);

 private:
  struct Control;
  SharedRing(std::string name, void* memory, size_t bytes);

  std::string name_;
  void* memory_;
  size_t bytes_;
  Control* control_;
  char* slots_;
};

}  // namespace troupe
