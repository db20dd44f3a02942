// Rendezvous: where a step's tensors meet when an edge crosses devices. A _Send kernel hands
// its tensor to the consuming device; the _Recv kernel there takes it. A tensor is matched by
// (step id, key): the key names the edge, the step id keeps concurrent steps apart.
//
// The devices layer defines the interface and the local table (LocalRendezvous); the device
// actor (actors/) implements the sending side with messages between device actors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "troupe/graph/core/tensor.hpp"

namespace troupe {

using RecvCallback = std::function<void(const Status& status, const Tensor& value)>;

class Rendezvous {
 public:
  virtual ~Rendezvous() = default;
  // Hands `value` to device `dst_device` under `key`; it is sent at once (never blocks).
  virtual Status send(const std::string& dst_device, int64_t step_id, const std::string& key,
                      const Tensor& value) = 0;
  // Calls `done` once with the tensor sent under `key` (at once if it has arrived), or with the
  // error that aborted the step.
  virtual void recv(int64_t step_id, const std::string& key, RecvCallback done) = 0;
  // Fails every pending recv of `step_id` with `reason` and drops its undelivered tensors;
  // tensors of the step that arrive later are dropped too.
  virtual void abort_step(int64_t step_id, const Status& reason) = 0;
};

// "<send device>;<recv device>;<edge name>": the same in every step, so kernels make it once.
std::string rendezvous_key(const std::string& send_device, const std::string& recv_device,
                           const std::string& edge_name);

}  // namespace troupe
