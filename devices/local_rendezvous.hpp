// LocalRendezvous: the table of one device: tensors that arrived before their Recv ran, and
// Recvs waiting for tensors that have not arrived. Used only from the device's thread.
#pragma once

#include <deque>
#include <string>
#include <unordered_map>

#include "troupe/devices/rendezvous.hpp"

namespace troupe {

class LocalRendezvous {
 public:
  // A tensor of `step_id` arrived for `key`: wakes its Recv or keeps it until the Recv runs.
  // InvalidArgument if a tensor was already delivered for `key`.
  Status deliver(int64_t step_id, const std::string& key, Tensor value);
  void recv(int64_t step_id, const std::string& key, RecvCallback done);
  void abort_step(int64_t step_id, const Status& reason);
  // Forgets a step that finished (its keys are all consumed); nothing is pending for it.
  void finish_step(int64_t step_id);

  // Why `step_id` was aborted, or OK.
  Status aborted(int64_t step_id) const;
  size_t pending_entries() const;

 private:
  struct Slot {
    bool has_value = false;
    Tensor value;
    RecvCallback waiter;
  };
  // Remembers this many aborted steps, to drop their late tensors.
  static constexpr size_t kAbortedMemory = 4096;

  // Hashed: keys of one step share long prefixes (device names), which an ordered map compares
  // again at every level.
  std::unordered_map<int64_t, std::unordered_map<std::string, Slot>> steps_;
  std::unordered_map<int64_t, Status> aborted_;
  std::deque<int64_t> aborted_order_;
};

}  // namespace troupe
