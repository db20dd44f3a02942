// A tensor channel connection to one peer process (connection.hpp).
#include "troupe/actors/transport/connection.hpp"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <caf/all.hpp>

#include "troupe/actors/transport/channel_tls.hpp"
#include "troupe/actors/transport/frame_format.hpp"
#include "troupe/actors/transport/frame_writer.hpp"
#include "troupe/actors/transport/inline_unit.hpp"
#include "troupe/actors/transport/sealed_stream.hpp"
#include "troupe/actors/transport/shared_ring.hpp"
#include "troupe/actors/transport/stream_io.hpp"
#include "troupe/graph/core/logging.hpp"

namespace troupe {
namespace {

constexpr auto kConnectTimeout = std::chrono::seconds(10);
constexpr auto kRetryAfter = std::chrono::seconds(10);  // after a failed connect
constexpr auto kHelloTimeout = std::chrono::seconds(10);

}  // namespace

Connection::Connection(ChannelContext& context, std::string endpoint)
    : context_(context), endpoint_(std::move(endpoint)) {
  writer_ = std::thread([this] { write_loop(); });
}

Connection::~Connection() {
  stop();
  join();
}

bool Connection::retired() {
  std::lock_guard lock(mutex_);
  return retired_;
}

void Connection::stop() {
  std::lock_guard lock(mutex_);
  wake_.notify_all();
  if (int fd = fd_; fd >= 0) {
    // Between writes the sealed stream ends with its close record (a write in progress may be
    // a large tensor: it is cut, and the reader sees that).
    if (!writing_ && sealer_ != nullptr) sealer_->close(fd);
    shutdown(fd, SHUT_RDWR);  // unblocks a write in progress
  }
}

void Connection::join() {
  if (writer_.joinable()) writer_.join();
}

bool Connection::send(std::vector<Frame>& frames) {
  std::unique_lock lock(mutex_);
  if (retired_) return false;
  if (context_.stopping) {
    lock.unlock();
    for (Frame& frame : frames)
      context_.fall_back(frame);
    return true;
  }
  if (!writes_here(frames)) {
    for (Frame& frame : frames)
      queue_.push_back(std::move(frame));
    wake_.notify_one();
    return true;
  }
  // A small batch is written by this thread, as far as the socket takes it without blocking:
  // the writer thread would have to wake up first. Never blocking here matters: this may be a
  // channel thread running a device, and its peer's channel thread may be doing the same
  // towards it.
  writing_ = true;
  int fd = fd_;
  lock.unlock();
  auto gone = [&] { return context_.stopping || peer_hung_up(fd); };
  Written out =
      write_frames(fd, sealer_.get(), nullptr, frames, {.wait = false}, gone, context_.counters);
  if (out.would_block) {
    lock.lock();
    if (!context_.stopping) {  // else the writer thread may have ended: the rest falls back
      unfinished_ = UnfinishedWrite{std::move(frames), fd, out.bytes};
      wake_.notify_all();
      return true;
    }
    lock.unlock();
  }
  finish_write(fd, frames, out.frames);
  lock.lock();
  end_write();
  return true;
}

void Connection::end_write() {
  writing_ = false;
  // The writer thread, for frames queued or a connection wanted meanwhile; a reply thread
  // waiting to close the socket.
  if (!queue_.empty() || connect_wanted_ || closers_ > 0) wake_.notify_all();
}

bool Connection::writes_here(const std::vector<Frame>& frames) const {
  if (fd_ < 0 || writing_ || !queue_.empty()) return false;
  // Small batches only, where the wake-up is most of the cost. Large tensors sent one by one
  // are better batched by the writer thread, and those for the ring wait for its slots.
  size_t bytes = 0;
  for (const Frame& frame : frames)
    bytes += static_cast<size_t>(frame.value.total_bytes());
  static_assert(DataPlane::kBatchBelowBytes <= frame::kSharedMemoryMinBytes);
  return bytes < DataPlane::kBatchBelowBytes;
}

bool Connection::call(const std::string& device, const caf::strong_actor_ptr& callee,
                      caf::mailbox_element& request) {
  std::unique_lock lock(mutex_);
  if (retired_ || context_.stopping) return false;
  int fd = fd_;
  if (fd < 0) {
    connect_wanted_ = true;
    wake_.notify_one();
    return false;
  }
  // Never behind a write in progress (it may be a large tensor): the actor message is sooner.
  if (writing_ || !queue_.empty()) return false;
  writing_ = true;
  uint64_t id = calls_.add(PendingCall{request.sender, request.mid, callee, device, fd});
  Sealer* sealer = sealer_.get();  // replaced only by a writer: this thread, now
  lock.unlock();
  // Serialised only once the call has the connection: a call that falls back costs nothing.
  CallWritten written = write_call(context_, fd, sealer, id, device, request.content());
  lock.lock();
  end_write();
  if (written == CallWritten::kWhole) {
    ++context_.counters.calls_sent;
    return true;
  }
  // Not written whole, so not run there. Unless the reply thread answered it already (the
  // connection ended), the caller sends it as an actor message.
  bool waiting = calls_.erase(id);
  if (written == CallWritten::kNotWritten && fd_ == fd) shutdown(fd_.exchange(-1), SHUT_RDWR);
  return !waiting;
}

void Connection::finish_write(int fd, std::vector<Frame>& frames, size_t sent) {
  // A frame that did not go out whole is dropped by the receiver, and the connection with it.
  if (fd >= 0 && sent < frames.size()) close_if_current(fd);
  context_.counters.frames_sent += sent;
  for (size_t i = sent; i < frames.size(); ++i)
    context_.fall_back(frames[i]);
}

void Connection::close_if_current(int fd) {
  std::lock_guard lock(mutex_);
  if (fd_ == fd) shutdown(fd_.exchange(-1), SHUT_RDWR);  // its reply thread closes it
}

bool Connection::may_retire() const {
  if (!tried_ || fd_ >= 0 || writing_ || unfinished_ || !queue_.empty() || connect_wanted_) {
    return false;
  }
  if (std::chrono::steady_clock::now() < retry_at_) return false;
  for (const ReplyThread& reply : reply_threads_) {
    if (!reply.done) return false;
  }
  return true;
}

void Connection::write_loop() {
  pthread_setname_np(pthread_self(), "troupe-write");
  for (;;) {
    std::vector<Frame> frames;
    WriteMode mode;
    int fd = -1;
    bool resumed = false;  // finishing a batch a sending thread began
    {
      std::unique_lock lock(mutex_);
      for (;;) {
        if (context_.stopping || unfinished_ ||
            (!writing_ && (!queue_.empty() || connect_wanted_))) {
          break;
        }
        if (may_retire()) {
          retired_ = true;
          break;
        }
        if (fd_ < 0 && tried_ && std::chrono::steady_clock::now() < retry_at_) {
          wake_.wait_until(lock, retry_at_);  // a retry pending: look again then
        } else {
          wake_.wait(lock);
        }
      }
      if (context_.stopping || retired_) break;
      tried_ = true;
      if (unfinished_) {  // `writing_` is set for this thread already
        frames = std::move(unfinished_->frames);
        fd = unfinished_->fd;
        mode.skip = unfinished_->written;
        unfinished_.reset();
        resumed = true;
      } else {
        connect_wanted_ = false;
        writing_ = true;  // calls wait for the connection, and for these frames
        // Whatever queued up goes in one gathered write: small tensors share the syscalls.
        size_t bytes = 0;
        while (!queue_.empty() && frames.size() < kMaxBatchFrames &&
               (frames.empty() || bytes + static_cast<size_t>(queue_.front().value.total_bytes()) <=
                                      kMaxBatchBytes)) {
          bytes += static_cast<size_t>(queue_.front().value.total_bytes());
          frames.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
    }
    if (!resumed) {
      if (fd_ < 0 && std::chrono::steady_clock::now() >= retry_at_ && !connect()) {
        log_warning(
            "tensor channel: cannot connect to {}; tensors and calls for it go as actor "
            "messages for now",
            endpoint_);
        retry_at_ = std::chrono::steady_clock::now() + kRetryAfter;
      }
      fd = fd_;
    }
    if (!frames.empty()) {
      auto gone = [&] { return context_.stopping || peer_hung_up(fd); };
      size_t sent = fd < 0 ? 0
                           : write_frames(fd, sealer_.get(), ring_.get(), frames, mode, gone,
                                          context_.counters)
                                 .frames;
      finish_write(fd, frames, sent);
    }
    std::lock_guard lock(mutex_);
    end_write();
  }
  std::list<ReplyThread> replies;
  {
    std::lock_guard lock(mutex_);
    queue_.clear();  // dropped, as on a connection that ends
    if (unfinished_) {
      unfinished_.reset();
      end_write();
    }
    replies = std::move(reply_threads_);
    if (retired_) ++context_.counters.connections_retired;
  }
  // Their sockets are shut down (stopping) or closed (retired): they end.
  for (ReplyThread& reply : replies)
    reply.thread.join();
}

bool Connection::connect() {
  ring_ = nullptr;
  sealer_ = nullptr;
  int fd = connect_to(endpoint_, kConnectTimeout);
  if (fd < 0) return false;
  {
    std::lock_guard lock(mutex_);
    if (context_.stopping) shutdown(fd, SHUT_RDWR);  // stop() may have looked already
    fd_ = fd;                                        // where stop() finds it during the hello
  }
  std::unique_ptr<Opener> opener;
  bool ready = true;
  if (context_.options.tls != nullptr) {
    auto keys = context_.options.tls->handshake(fd, ChannelTls::Role::kConnector,
                                                ChannelContext::kHandshakeTimeout, endpoint_);
    if (keys.ok()) {
      sealer_ = std::make_unique<Sealer>(keys->send);
      opener = std::make_unique<Opener>(fd, keys->receive);
      ++context_.counters.sealed_connections;
    } else {
      ++context_.counters.handshakes_refused;
      context_.refused_handshakes.note(keys.status().message());
      ready = false;
    }
  }
  // The hello is always said (the reader admits a connection by it); with TLS its answer
  // also shows the peer accepted this certificate.
  if (ready) ready = say_hello(fd, context_.options.shared_memory, opener.get());
  std::list<ReplyThread> finished;
  {
    std::lock_guard lock(mutex_);
    if (!ready || context_.stopping) {
      fd_ = -1;
      sealer_ = nullptr;
      ::close(fd);
      return false;
    }
    for (auto it = reply_threads_.begin(); it != reply_threads_.end();) {
      auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), reply_threads_, it);
      it = next;
    }
    // From here on the socket is closed by its reply thread only.
    ReplyThread& reply = reply_threads_.emplace_back();
    reply.thread = std::thread([this, fd, opener = std::move(opener), self = &reply]() mutable {
      reply_loop(fd, std::move(opener), self);
    });
  }
  for (ReplyThread& reply : finished)
    reply.thread.join();
  return true;
}

bool Connection::say_hello(int fd, bool offer_ring, Opener* opener) {
  std::unique_ptr<SharedRing> ring;
  if (offer_ring) {
    auto made = SharedRing::create();
    if (made.ok()) {
      ring = std::move(*made);
    } else {
      log_warning("tensor channel: {}; tensors for {} go on the socket", made.status().message(),
                  endpoint_);
    }
  }
  std::string name = ring != nullptr ? ring->name() : "";
  frame::HelloHead hello{frame::kHelloMagic,
                         frame::kVersion,
                         static_cast<uint16_t>(name.size()),
                         SharedRing::kSlots,
                         SharedRing::kSlotBytes,
                         ring != nullptr ? ring->nonce() : SharedRing::Nonce{}};
  char answer = 0;
  bool answered = false;
  if (send_all(fd, sealer_.get(),
               {{&hello, sizeof hello}, {const_cast<char*>(name.data()), name.size()}},
               sizeof hello + name.size())) {
    // The answer within kHelloTimeout (a receive timeout: a sealed record may come in pieces).
    timeval limit{std::chrono::seconds(kHelloTimeout).count(), 0}, none{0, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    answered = opener != nullptr ? opener->read(&answer, 1) : recv(fd, &answer, 1, 0) == 1;
    answered = answered && (answer == frame::kRingTaken || answer == frame::kRingDeclined);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
  }
  if (ring != nullptr) ring->unlink();  // opened by the peer by now, or never
  if (answered && answer == frame::kRingTaken && ring != nullptr) ring_ = std::move(ring);
  return answered;
}

void Connection::reply_loop(int fd, std::unique_ptr<Opener> opener, ReplyThread* self) {
  pthread_setname_np(pthread_self(), "troupe-answers");
  FrameReader reader(fd, opener.get());
  InlineUnit::Scope scope;  // a requester that was idle runs on this thread
  InlineUnit* here = InlineUnit::of(context_.system);
  std::string why = read_answers(
      context_, reader,
      [&](uint64_t id) {
        std::lock_guard lock(mutex_);
        return calls_.take(id, fd);
      },
      here);
  std::vector<PendingCall> orphans;
  {
    std::unique_lock lock(mutex_);
    orphans = calls_.take_all(fd);  // none of them is answered now
    if (fd_ == fd) fd_ = -1;
    ++closers_;
    wake_.wait(lock, [&] { return !writing_; });  // a writer may hold the socket still
    --closers_;
    ::close(fd);
  }
  fail_calls(orphans, endpoint_, why, here);
  std::lock_guard lock(mutex_);
  self->done = true;
  wake_.notify_all();  // the writer thread may retire now
}

}  // namespace troupe
