// DataPlane: what the runtime's actors see of the transport that carries tensors and steps
// between processes (docs/wire.md). A device actor attaches itself, so that tensors and steps
// from other processes reach it, and tells its peers the plane's address; its rendezvous sends
// tensors to devices of other processes; a master session sends a remote device's steps to the
// runner the plane gives it for that device.
//
// The tensor channel (tensor_channel.hpp) implements it. A task without a plane (none given,
// or --tensor_channel=false) sends everything as CAF actor messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "troupe/graph/core/tensor.hpp"

namespace troupe {

class DataPlane {
 public:
  // A tensor for `device`, the device actor `peer` of another process.
  struct Frame {
    caf::actor peer;
    std::string device;
    int64_t step_id = 0;
    std::string key;
    Tensor value;
  };

  // Tensors (or a device's batch of them) smaller than this are worth holding until the device
  // actor has handled its current message, and sending together (DeviceRendezvous::flush).
  static constexpr size_t kBatchBelowBytes = 64 * 1024;

  virtual ~DataPlane() = default;

  // "host:port": where peers reach this process's plane.
  virtual const std::string& address() const = 0;

  // Tensors and steps for `device` from other processes are delivered to `actor` until
  // detach(device).
  virtual void attach(const std::string& device, const caf::actor& actor) = 0;
  virtual void detach(const std::string& device) = 0;

  // Whether `value` may travel on the plane (not a string tensor, nor a dead value: an
  // uninitialised Tensor, which goes as an actor message).
  static bool carries(const Tensor& value) {
    return value.dtype() != DataType::kString && value.is_initialized();
  }

  // Sends `frames`, in this order, to the process whose plane is at `address`. Never waits. A
  // frame the plane cannot deliver goes to its `peer` as an actor message instead.
  virtual void send(const std::string& address, std::vector<Frame> frames) = 0;

  // Where a master sends the steps (run_partition requests) of `device`, the actor `callee` in
  // the process whose plane is at `address`: an actor that takes requests on the plane's own
  // path and hands anything else to `callee`; or `callee` itself if the plane has no such path.
  virtual caf::actor runner(const std::string& address, const std::string& device,
                            const caf::actor& callee) = 0;
};

}  // namespace troupe
