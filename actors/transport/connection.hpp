// Connection: this process's connection to the tensor channel of one other process, made when
// the first frame or call for it comes, and the threads that serve it:
//   - a writer thread connects (TLS handshake and hello), writes the frames queued for the
//     peer, in batches of one gathered write, and finishes batches a sending thread began;
//   - a reply thread per socket reads the answers to calls and closes the socket when it ends.
// When the socket has ended (the peer went away, or broke the stream) and nothing is left to
// do, the writer thread joins the reply threads and ends: the connection retires, and the
// channel joins its writer and drops it. Frames for the peer after that make a new connection.
//
// Socket lifetime: the socket is closed only by its reply thread, once a read on it failed;
// other threads shut it down, which ends that read. So a socket number is not reused while
// any thread of the connection may still use it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <caf/fwd.hpp>

#include "troupe/actors/transport/caller.hpp"
#include "troupe/actors/transport/channel_context.hpp"
#include "troupe/actors/transport/data_plane.hpp"

namespace troupe {

class Opener;
class Sealer;
class SharedRing;

class Connection {
 public:
  using Frame = DataPlane::Frame;

  // What the writer thread puts into one gathered write at most (a larger frame goes alone).
  static constexpr size_t kMaxBatchFrames = 128;
  static constexpr size_t kMaxBatchBytes = 1 << 20;

  // Starts the writer thread; it connects to `endpoint` when there is something to send.
  Connection(ChannelContext& context, std::string endpoint);
  ~Connection();  // stop() and join()
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends `frames` (TensorChannel::send): a batch of less than DataPlane::kBatchBelowBytes on an
  // idle connection is written by this thread as far as the socket takes it without blocking
  // (the writer thread finishes it); anything else is queued for the writer thread. Never
  // waits. False, leaving `frames` as they were, once the connection has retired.
  bool send(std::vector<Frame>& frames);

  // Writes `request` as a call for `device` (TensorChannel::call). False, leaving `request` as
  // it was, if the connection cannot take it now: not connected (the writer thread connects
  // meanwhile), busy writing, or retired.
  bool call(const std::string& device, const caf::strong_actor_ptr& callee,
            caf::mailbox_element& request);

  // Whether the writer thread has ended, or is about to: the connection takes nothing more.
  bool retired();

  // Shuts the socket and wakes the writer thread, which ends (context.stopping is set).
  void stop();
  // Joins the writer thread (it has joined the reply threads). After stop() or retired().
  void join();

 private:
  struct UnfinishedWrite {
    std::vector<Frame> frames;
    int fd;
    size_t written;  // bytes of the batch already on the socket
  };
  struct ReplyThread {
    std::thread thread;
    bool done = false;  // guarded by mutex_
  };

  void write_loop();
  // Connects, shakes hands (TLS) and says hello, and starts the socket's reply thread; false
  // if it cannot. On the writer thread, `writing_` set.
  bool connect();
  // Sends the hello on the new socket `fd`, offering a ring if `offer_ring` (the peer answers
  // through `opener` with TLS); false if the peer did not answer it.
  bool say_hello(int fd, bool offer_ring, Opener* opener);
  void reply_loop(int fd, std::unique_ptr<Opener> opener, ReplyThread* self);
  // Under the lock: the socket is free for the next writer (`writing_` ends).
  void end_write();
  // Under the lock: whether a sending thread may write `frames` itself now: connected, idle,
  // nothing queued, and a small batch.
  bool writes_here(const std::vector<Frame>& frames) const;
  // After a write of `frames` to `fd`: closes the socket if `sent` < all, and sends the frames
  // not sent as actor messages.
  void finish_write(int fd, std::vector<Frame>& frames, size_t sent);
  // Shuts `fd` down if it is still the socket (its reply thread closes it).
  void close_if_current(int fd);
  // Under the lock: nothing to write, no socket, no reply thread running, no retry pending.
  bool may_retire() const;

  ChannelContext& context_;
  const std::string endpoint_;
  std::atomic<int> fd_{-1};

  std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  std::deque<Frame> queue_;
  bool writing_ = false;         // a thread writes (or connects) on the socket
  bool connect_wanted_ = false;  // a call found no connection: the writer thread makes one
  bool tried_ = false;           // the writer thread has connected or tried to
  bool retired_ = false;
  int closers_ = 0;                                   // reply threads waiting for `writing_` to end
  std::chrono::steady_clock::time_point retry_at_{};  // no connecting before (after a failure)
  // A batch a sending thread began and the socket would not take whole without blocking: the
  // writer thread finishes it (`writing_` stays set meanwhile).
  std::optional<UnfinishedWrite> unfinished_;
  CallTable calls_;
  std::list<ReplyThread> reply_threads_;  // one per socket; finished ones joined at connect
  std::unique_ptr<SharedRing> ring_;      // the writer thread's, if the peer took it
  std::unique_ptr<Sealer> sealer_;        // with TLS: seals what the socket's writer writes
  std::thread writer_;
};

}  // namespace troupe
