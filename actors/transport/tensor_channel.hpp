// TensorChannel: a process's side channel for bulk tensors between device actors of different
// processes, beside CAF's actor messages (docs/wire.md, "Tensor channel").
//
// CAF copies a message's payload several times on its way and allocates fresh buffers for it;
// a tensor sent here is written to a TCP socket straight from its buffer (writev of a small
// header and the data) and read on the other side straight into the new tensor's buffer, which
// is then handed to the receiving device actor as an ordinary in-process message. Each process
// listens on one extra port (Server picks it; peers learn it from the device actors).
//
// Between processes on the same host, the bytes of large tensors go through a ring in shared
// memory instead of the socket (actors/transport/shared_ring.hpp); the frame's head still goes on
// the socket, so order and addressing are the same. The writer offers a ring when it connects, and
// the reader takes it only if it can open it: a peer on another host (or container) cannot.
//
// A tensor that cannot go this way (no connection, a broken one, a refused frame) goes as the
// usual actor message instead: the channel adds speed, never a failure mode of its own.
//
// In a TLS cluster (Options::tls), each connection starts with a TLS 1.3 handshake in which both
// ends verify the other's certificate against the cluster's CA; everything after it, the
// shared-memory ring's offer included, travels sealed (actors/transport/sealed_stream.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/fwd.hpp>

#include "graph/status.hpp"
#include "graph/tensor.hpp"

namespace troupe {

class ChannelTls;
class Sealer;
class Opener;

class TensorChannel {
 public:
  // Tensors (or a device's batch of them) smaller than this are better sent as actor messages:
  // on the connection that also carries the step's replies they arrive sooner (DeviceRendezvous).
  static constexpr size_t kMinBytes = 64 * 1024;
  // What the writer thread puts into one writev at most (a larger frame goes alone).
  static constexpr size_t kMaxBatchFrames = 128;
  static constexpr size_t kMaxBatchBytes = 1 << 20;

  // Tensors whose bytes go through shared memory to a process on the same host, from this size.
  static constexpr size_t kSharedMemoryMinBytes = 64 * 1024;

  struct Options {
    // Frames with more data than this are refused.
    uint64_t max_bytes = uint64_t{1} << 31;
    // Offer (as writer) and take (as reader) a shared-memory ring with processes on this host.
    bool shared_memory = true;
    // Authenticate and seal every connection with these credentials (none: plain TCP).
    std::shared_ptr<const ChannelTls> tls;
    // The port to listen on; 0 picks a free one.
    uint16_t port = 0;
  };

  // Listens on `bind_address` (nullptr: every interface) at `options.port`; peers are told
  // "<advertised_host>:<port>". Unavailable naming the address if it cannot listen.
  static StatusOr<std::shared_ptr<TensorChannel>> start(caf::actor_system& system,
                                                        const std::string& advertised_host,
                                                        const char* bind_address, Options options);
  ~TensorChannel();  // stop()
  TensorChannel(const TensorChannel&) = delete;
  TensorChannel& operator=(const TensorChannel&) = delete;

  // "host:port" for peers.
  const std::string& endpoint() const { return endpoint_; }

  // Frames addressed to `device` are delivered to `actor` as (recv_tensor_atom, step, key,
  // tensor). A frame for a device not (or no longer) added is read and dropped.
  void add_device(const std::string& device, const caf::actor& actor);
  void remove_device(const std::string& device);

  // Whether `value` may travel here (not a string tensor).
  static bool takes(const Tensor& value);

  // A tensor for `device`, a device actor (`peer`) of another process.
  struct Frame {
    caf::actor peer;
    std::string device;
    int64_t step_id = 0;
    std::string key;
    Tensor value;
  };

  // Sends `frames` to the process whose channel is at `endpoint`, in this order and together
  // (one writev): a batch of less than kMinBytes on an idle connection is written by this
  // thread as far as the socket takes it without blocking (the writer thread finishes it),
  // anything else is queued for the connection's writer thread. Never waits; a frame the
  // channel cannot deliver is sent to its `peer` as an actor message.
  void send(const std::string& endpoint, std::vector<Frame> frames);
  void send(const std::string& endpoint, const caf::actor& peer, const std::string& device,
            int64_t step_id, const std::string& key, Tensor value);

  // Calls (docs/wire.md, "Calls"): `request`, a request message of an actor of this process to
  // `callee`, the actor of `device` in the process whose channel is at `endpoint`, goes as a
  // call frame, written by this thread; the reply comes back on the same connection and is
  // enqueued to the requester as if `callee` had answered. A connection that ends before the
  // reply answers the request with Unavailable, naming the device. Returns false, leaving
  // `request` as it was, when the channel cannot take it now (not connected yet: it connects
  // in the background; or busy writing): the caller sends it as an actor message instead.
  bool call(const std::string& endpoint, const std::string& device,
            const caf::strong_actor_ptr& callee, caf::mailbox_element& request);

  // Closes every connection and joins the channel's threads. Idempotent.
  void stop();

  struct Counters {
    std::atomic<uint64_t> frames_sent{0};           // written whole (data on the socket or ring)
    std::atomic<uint64_t> shared_memory_frames{0};  // of those, data through shared memory
    std::atomic<uint64_t> frames_received{0};       // delivered to a device actor
    std::atomic<uint64_t> fallbacks{0};             // sent as actor messages instead
    std::atomic<uint64_t> refused{0};               // malformed or unaddressable frames received
    std::atomic<uint64_t> calls_sent{0};            // requests written as calls
    std::atomic<uint64_t> calls_answered{0};        // replies to them delivered
    std::atomic<uint64_t> calls_served{0};          // calls received and delivered to a device
    std::atomic<uint64_t> sealed_connections{0};    // made or accepted with TLS, both ways
    std::atomic<uint64_t> handshakes_refused{0};    // TLS handshakes that failed, both ways
  };
  const Counters& counters() const { return counters_; }

 private:
  struct Connection;
  TensorChannel(caf::actor_system& system, Options options);

  void accept_loop();
  // Serves accepted socket `fd` (after the TLS handshake, with TLS); `done` is set at the end.
  void read_loop(int fd, std::atomic<bool>* done);
  // Joins the reader threads whose connections ended (the acceptor, between accepts).
  void join_finished_readers();
  void write_loop(Connection* connection);
  // Reads the replies to calls on `fd`, one of `connection`'s sockets (through `opener` with
  // TLS); when it ends, answers the calls still waiting there with Unavailable and closes `fd`.
  void reply_loop(Connection* connection, int fd, std::unique_ptr<Opener> opener);
  // Delivers call `id` (for `device`, a serialised message) to its device with `responder` as
  // the sender (the device runs on `here` if it was idle), or answers it with an error.
  void serve_call(uint64_t id, const std::string& device, const std::vector<char>& payload,
                  const caf::strong_actor_ptr& responder, caf::execution_unit* here);
  // The actor added for `device`, or none.
  caf::actor find_device(const std::string& device);
  // The connection to `endpoint`, made (with its writer thread) if there is none. Under the lock.
  Connection* connection_to(const std::string& endpoint);
  // Connects `connection` (and offers it a shared-memory ring); false if it cannot.
  bool connect(Connection* connection);
  // Sends the hello on `connection`'s new socket `fd`, offering a ring if `ring` (the peer
  // answers through `opener` with TLS); false if the peer did not answer it.
  bool say_hello(Connection* connection, int fd, bool ring, Opener* opener);
  void fall_back(Frame& out);
  // Closes `fd` if it is still `connection`'s socket (under the lock: stop() shuts down the
  // socket it sees there).
  void close_if_current(Connection* connection, int fd);
  struct UnfinishedWrite;
  struct WriteMode {
    bool wait = true;  // block until all is written; else stop where the socket would block
    size_t skip = 0;   // bytes of the batch an earlier write put on the socket
  };
  struct Written {
    size_t frames = 0;         // frames that went out whole
    size_t bytes = 0;          // bytes of the batch on the socket now (`skip` included)
    bool would_block = false;  // stopped where the socket would block (not an error)
  };
  // Writes `frames` in one writev, with the data of large ones through `connection`'s ring if
  // it has one (waiting only).
  Written write_frames(Connection* connection, int fd, const std::vector<Frame>& frames,
                       WriteMode mode);
  // Under the lock: `connection`'s socket is free for the next writer (its `writing` ends).
  void end_write(Connection* connection);
  // Whether a sending thread may write `frames` itself now (under the lock): connected, idle,
  // nothing queued, and a small batch.
  bool writes_here(Connection* connection, const std::vector<Frame>& frames) const;
  // Whether the peer on `fd` hung up or this channel stops: a wait on a ring gives up.
  bool gone(int fd) const;
  // After a write of `frames` to `fd`: closes the socket if `sent` < all, and sends the frames
  // not sent as actor messages.
  void finish_write(Connection* connection, int fd, std::vector<Frame>& frames, size_t sent);

  caf::actor_system& system_;
  const Options options_;
  int listen_fd_ = -1;
  std::string endpoint_;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;

  std::mutex mutex_;  // guards everything below
  std::map<std::string, caf::actor_addr> devices_;
  std::map<std::string, std::unique_ptr<Connection>> connections_;  // by endpoint
  std::vector<int> reader_fds_;
  struct Reader {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  std::list<Reader> readers_;  // finished ones are joined at the next accept
  int handshaking_ = 0;        // accepted connections in their TLS handshake
  uint64_t next_call_id_ = 1;
  Counters counters_;
};

}  // namespace troupe
