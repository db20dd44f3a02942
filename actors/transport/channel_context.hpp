// ChannelContext: what the parts of one tensor channel share (tensor_channel.hpp): the actor
// system, the options, the counters, the devices that frames and calls are for, and whether
// the channel stops. Its connections and readers hold a reference; the channel outlives them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/fwd.hpp>

#include "troupe/actors/transport/data_plane.hpp"
#include "troupe/actors/transport/throttled_log.hpp"

namespace troupe {

class ChannelTls;

struct ChannelOptions {
  // Frames, calls and answers with more data than this are refused.
  uint64_t max_bytes = uint64_t{1} << 31;
  // Offer (as writer) and take (as reader) a shared-memory ring with processes on this host.
  bool shared_memory = true;
  // Steps to devices of other processes go as calls on the channel (DataPlane::runner); off:
  // as CAF actor messages.
  bool calls = true;
  // Authenticate and seal every connection with these credentials (none: plain TCP).
  std::shared_ptr<const ChannelTls> tls;
  // The port to listen on; 0 picks a free one.
  uint16_t port = 0;
  // An accepted connection is pending until its first frame, a hello (after the TLS
  // handshake, with TLS), has been read: it must come within this. At most max_pending
  // connections are pending at once, and max_pending_per_peer from one address: a new one
  // that finds a cap full has the oldest pending connection of its address (or of the address
  // with the most) shut down to make room, as the accept gate does (accept_gate.hpp).
  std::chrono::milliseconds handshake_timeout{10000};
  int max_pending = 64;
  int max_pending_per_peer = 32;
};

struct ChannelCounters {
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
  std::atomic<uint64_t> pending_dropped{0};       // shut down to make room under a cap
  std::atomic<uint64_t> pending_timed_out{0};     // no hello within handshake_timeout
  std::atomic<uint64_t> connections_retired{0};   // outgoing connections whose peer went away
  // Sealed streams read to their end, both ways: closed by their writer (its close record), or
  // cut without it (its process or the network failed, or the connection was ended by someone
  // else) while this channel was not stopping.
  std::atomic<uint64_t> streams_closed{0};
  std::atomic<uint64_t> streams_cut{0};
};

struct ChannelContext {
  // How long the connecting side's TLS handshake and hello may take.
  static constexpr std::chrono::seconds kHandshakeTimeout{10};

  ChannelContext(caf::actor_system& system, ChannelOptions options)
      : system(system), options(std::move(options)) {}

  void add_device(const std::string& device, const caf::actor& actor);
  void remove_device(const std::string& device);
  // The actor added for `device`, or none.
  caf::actor find_device(const std::string& device);

  // Sends `frame` to its peer as an actor message: it cannot go on the channel.
  void fall_back(DataPlane::Frame& frame);

  caf::actor_system& system;
  const ChannelOptions options;
  ChannelCounters counters;
  std::atomic<bool> stopping{false};
  std::string endpoint;         // "host:port" for peers; set before any thread starts
  std::atomic<int> pending{0};  // accepted connections that have not said their hello yet
  // Refused handshakes, both sides: a stranger knocking many times, or a peer with the wrong
  // credentials, costs no more than one line per 10 s.
  ThrottledLog refused_handshakes;
  // Pending connections shut down to make room, and pending ones closed at their deadline.
  ThrottledLog dropped_pending;
  ThrottledLog timed_out_pending;

 private:
  std::mutex mutex_;
  std::map<std::string, caf::actor_addr> devices_;
};

}  // namespace troupe
