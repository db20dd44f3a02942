// DeviceRendezvous: the rendezvous of one device actor. Receiving uses the device's local
// table; sending resolves the peer device actor by name through the server's directory (once,
// then cached) and sends it the tensor directly: (recv_tensor_atom, step, key, tensor).
// In one process the tensor moves by reference. Between processes, when both have a data plane
// (actors/transport/data_plane.hpp), every tensor but strings goes on it: those of 64 KiB and
// more at once, smaller ones when the device actor's current message is handled (flush(), on a
// flush_sends message to itself), a process's batch of them together. Without a plane every
// tensor is one CAF message.
// Used only from the owning device actor.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "troupe/actors/transport/data_plane.hpp"
#include "troupe/devices/local_rendezvous.hpp"

namespace troupe {

// The bytes of the tensors this process's devices have sent to devices of other tasks (in
// this process or another) since the process started: what steps move between tasks, counted
// once per tensor sent. For tests and benchmarks.
uint64_t tensor_bytes_sent_between_tasks();

class DeviceRendezvous : public Rendezvous {
 public:
  // `on_send_failure(step, status)` aborts a step whose tensor could not be sent. `device` is
  // the owning device's full name.
  // Tensors for devices of other processes go through `plane` when both processes have one
  // (actors/transport/data_plane.hpp).
  DeviceRendezvous(caf::event_based_actor* self, caf::actor directory, std::string device,
                   std::function<void(int64_t, const Status&)> on_send_failure,
                   std::shared_ptr<DataPlane> plane = nullptr);

  // InvalidArgument at once, before anything is queued, for a tensor to another task that is
  // over the message size limit (actors/messages.hpp): the Send fails, and so does its step.
  Status send(const std::string& dst_device, int64_t step_id, const std::string& key,
              const Tensor& value) override;
  void recv(int64_t step_id, const std::string& key, RecvCallback done) override;
  void abort_step(int64_t step_id, const Status& reason) override;

  // A tensor another device sent here.
  Status deliver(int64_t step_id, const std::string& key, Tensor value);
  LocalRendezvous& table() { return table_; }
  // Sends the small tensors held back since the last flush (see above) on the data plane.
  void flush();
  // Drops the cached peers whose names start with `task_prefix` ("/job:ps/replica:0/task:0/"):
  // their task was lost, and a restarted one has new actors.
  void forget_task(const std::string& task_prefix);
  // Calls `done` once every tensor step `step_id` sent to a peer still being resolved has been
  // handed on (OK) or could not be (the first failure), at once if there is none. A partition
  // answers its master only then: a send that fails after the partition's last kernel ran
  // (its peer's task was lost) fails the step instead of leaving the receiver to wait for the
  // step's deadline.
  void when_sent(int64_t step_id, std::function<void(const Status&)> done);

 private:
  struct Outgoing {
    int64_t step_id;
    std::string key;
    Tensor value;
  };
  struct Peer {
    caf::actor actor;
    std::string plane;  // its process's data plane address; "" for actor messages only
  };
  // Asks a peer in another process for its data plane address, then calls resolved().
  void ask_plane(const std::string& device, const caf::actor& peer);
  void resolved(const std::string& device, const Status& status, Peer peer);
  void send_to(const Peer& peer, const std::string& device, int64_t step_id, std::string key,
               Tensor value);

  caf::event_based_actor* self_;
  caf::actor directory_;
  std::string task_prefix_;  // "/job:ps/replica:0/task:0/": devices of the same task
  std::function<void(int64_t, const Status&)> on_send_failure_;
  uint64_t max_message_bytes_;  // the system's, read once: sends check every tensor
  LocalRendezvous table_;
  std::shared_ptr<DataPlane> plane_;
  std::unordered_map<std::string, Peer> peers_;
  std::map<std::string, std::vector<Outgoing>> waiting_;  // sends to devices being resolved
  // Per step: how many of its sends wait in waiting_, the first failure, who to tell.
  struct Unresolved {
    int count = 0;
    Status status;
    std::function<void(const Status&)> done;
  };
  std::unordered_map<int64_t, Unresolved> unresolved_;
  // Held back for flush(), by data plane address.
  std::map<std::string, std::vector<DataPlane::Frame>> small_;
  bool flush_scheduled_ = false;
};

}  // namespace troupe
