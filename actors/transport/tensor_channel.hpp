// TensorChannel: a process's data plane (data_plane.hpp) — the side channel that carries bulk
// tensors, and the steps of remote devices as calls, between device actors of different
// processes, beside CAF's actor messages (docs/wire.md, "Tensor channel").
//
// CAF copies a message's payload several times on its way and allocates fresh buffers for it;
// a tensor sent here is written to a TCP socket straight from its buffer (one gathered write
// of a small head and the data) and read on the other side straight into the new tensor's
// buffer, which is then handed to the receiving device actor as an ordinary in-process message.
// Each process listens on one extra port; peers learn it from the device actors.
//
// Between processes on the same host, the bytes of large tensors go through a ring in shared
// memory instead of the socket (shared_ring.hpp); the frame's head still goes on the socket, so
// order and addressing are the same. The writer offers a ring when it connects, and the reader
// takes it only if it can open it: a peer on another host (or container) cannot.
//
// A tensor that cannot go this way (no connection, a broken one, a refused frame) goes as the
// usual actor message instead: the channel adds speed, never a failure mode of its own.
//
// In a TLS cluster (ChannelOptions::tls), each connection starts with a TLS 1.3 handshake in
// which both ends verify the other's certificate against the cluster's CA; everything after
// it, the shared-memory ring's offer included, travels sealed (sealed_stream.hpp).
//
// The parts: frame_format.hpp (the frames), connection.hpp (to one peer: writer and reply
// threads), frame_writer.hpp, channel_reader.hpp (an accepted connection), caller.hpp and
// responder.hpp (calls), call_proxy.hpp. Threads: one acceptor; per peer process written to, a
// writer and a reply thread, which end when the peer goes away; per accepted connection, a
// reader thread, which ends with it.
#pragma once

#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "troupe/actors/transport/channel_context.hpp"
#include "troupe/actors/transport/data_plane.hpp"
#include "troupe/actors/transport/frame_format.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe {

class Connection;
struct AnswerLink;

class TensorChannel final : public DataPlane, public std::enable_shared_from_this<TensorChannel> {
 public:
  using Options = ChannelOptions;
  using Counters = ChannelCounters;
  static constexpr size_t kSharedMemoryMinBytes = frame::kSharedMemoryMinBytes;

  // Listens on `bind_address` (nullptr: every interface) at `options.port`; peers are told
  // "<advertised_host>:<port>". Unavailable naming the address if it cannot listen.
  static StatusOr<std::shared_ptr<TensorChannel>> start(caf::actor_system& system,
                                                        const std::string& advertised_host,
                                                        const char* bind_address, Options options);
  ~TensorChannel() override;  // stop()
  TensorChannel(const TensorChannel&) = delete;
  TensorChannel& operator=(const TensorChannel&) = delete;

  // DataPlane. Frames for a device not (or no longer) attached are read and dropped; calls for
  // it are answered with NotFound.
  const std::string& address() const override { return context_.endpoint; }
  void attach(const std::string& device, const caf::actor& actor) override;
  void detach(const std::string& device) override;
  // A batch of less than kBatchBelowBytes for an idle connection is written by this thread as
  // far as the socket takes it without blocking; anything else is queued for the connection's
  // writer thread. A frame the channel cannot deliver is sent to its `peer` as an actor message.
  void send(const std::string& address, std::vector<Frame> frames) override;
  // A CallProxy (call_proxy.hpp); `callee` itself if Options::calls is off.
  caf::actor runner(const std::string& address, const std::string& device,
                    const caf::actor& callee) override;

  // For CallProxy: `request`, a request message of an actor of this process to `callee`, the
  // actor of `device` in the process whose channel is at `endpoint`, goes as a call frame,
  // written by this thread; the answer comes back on the same connection and is enqueued to the
  // requester as if `callee` had answered. A connection that ends before the answer answers
  // the request with Unavailable, naming the device. Returns false, leaving `request` as it
  // was, when the channel cannot take it now (not connected yet: it connects in the
  // background; or busy writing): the caller sends it as an actor message instead.
  bool call(const std::string& endpoint, const std::string& device,
            const caf::strong_actor_ptr& callee, caf::mailbox_element& request);

  // Closes every connection and joins the channel's threads. Idempotent.
  void stop();

  const Counters& counters() const { return context_.counters; }
  // Outgoing connections open now (their peers have not gone away).
  size_t connections();

 private:
  TensorChannel(caf::actor_system& system, Options options);

  void accept_loop();
  // The connection to `endpoint`, made if there is none (or it retired); none once stopping.
  std::shared_ptr<Connection> connection_to(const std::string& endpoint);
  // Joins the reader threads whose connections ended and the connections that retired (the
  // acceptor, between accepts).
  void join_finished();

  ChannelContext context_;
  int listen_fd_ = -1;
  std::thread acceptor_;

  std::mutex mutex_;                                                // guards everything below
  std::map<std::string, std::shared_ptr<Connection>> connections_;  // by endpoint
  std::vector<std::shared_ptr<Connection>> retired_;                // replaced, not joined yet
  struct Reader {
    int fd = -1;
    std::thread thread;
    bool done = false;
    std::string peer;  // its address, without the port
    std::chrono::steady_clock::time_point accepted;
    std::atomic<bool> pending{true};      // no hello read yet (serve_connection clears it)
    bool dropped = false;                 // shut down to make room for a newer one
    std::shared_ptr<AnswerLink> answers;  // once sealed: closed with its close record at stop
  };
  // Makes room for a connection from `peer` under the pending caps (mutex_ held).
  void make_room_for(const std::string& peer);
  std::list<Reader> readers_;  // finished ones are joined by the acceptor
};

}  // namespace troupe
