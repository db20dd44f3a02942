// The accept gate: admission control for connections to a task's port before they have
// proven themselves (authenticated, with TLS).
//
// CAF 0.17 accepts connections on its network thread and gives troupe no hook between accept()
// and its TLS session; with TLS it loads the credential files again for every connection it
// accepts, and when the process is out of descriptors that load fails with an exception on the
// network thread and ends the process. So troupe takes CAF's place at accept() (the program
// defines accept(); libcaf_io calls it through the PLT; see actors/CMakeLists.txt) for the
// ports a Server publishes, and for each connection accepted there:
//   - keeps kReservedDescriptors descriptors free: a connection that would use one of them is
//     closed at once, and one that finds none (EMFILE) is taken off the backlog and closed, so
//     the node never runs out and never spins on a full backlog;
//   - counts it as pending until it has proven itself: with TLS, until its handshake has
//     finished (SSL_accept succeeded, so the peer's certificate was verified; the program
//     defines SSL_accept: actors/transport/caf_call_hooks.hpp); without TLS, until its whole
//     first frame has arrived (a BASP handshake, whose header says how long it is);
//   - keeps at most max_pending connections pending in the process and max_pending_per_peer
//     from one address, each raised to what the cluster of the tasks served here needs (two
//     per task of its ClusterSpec, so that a task of the cluster never waits for a slot);
//     when a new connection finds a cap full, the oldest pending connection of its address
//     (per-address cap) or of the address with the most pending (process cap) is shut down
//     to make room: a flood from one address cannot keep another address out, and a
//     legitimate peer sharing the flooding address gets a slot long enough to finish a
//     handshake (milliseconds), where refusing the newcomer locked it out for the whole flood;
//   - shuts down a connection still pending after handshake_timeout, which CAF then closes;
//   - without TLS, reads the header of its first frame as CAF reads it (the program defines
//     recv() too) and closes the connection if it claims more than kMaxFirstFrameBytes: CAF
//     would allocate whatever a header claims, up to 4 GiB, before troupe sees a byte of it.
// Each kind of refusal is logged at most once per 10 s, with how many there were. Ports that
// were not published by a Server (and every other socket of the process) are not touched.
#pragma once

#include <chrono>
#include <cstdint>

#include "troupe/graph/core/status.hpp"

namespace troupe {

struct AdmissionOptions {
  // Connections that have not proven themselves, in the whole process and per peer address.
  int max_pending = 256;
  int max_pending_per_peer = 32;
  // How long a connection may take to prove itself before it is closed.
  std::chrono::milliseconds handshake_timeout{10000};

  // InvalidArgument naming the field for a value below 1 (timeout: 1 ms).
  Status validate() const;

  // These caps raised to what a task of a cluster of `tasks` tasks needs: two pending
  // connections per task from one address (its tasks may share one host; a crossed connect
  // makes two), and room for all of those plus one flooding address in the process. A task of
  // the cluster never waits for a slot.
  AdmissionOptions for_cluster(int tasks) const;
};

namespace accept_gate {

// Descriptors kept free for the process's own use (files, CAF's credential loads).
inline constexpr int kReservedDescriptors = 32;
// The most a plaintext peer's first frame (its handshake, a few hundred bytes) may claim.
inline constexpr uint64_t kMaxFirstFrameBytes = 64 << 10;

// The process-wide settings (the last Runtime created sets them).
void configure(const AdmissionOptions& options);
// Gates the connections accepted on `port` from now on, for a task of a cluster of
// `cluster_tasks` tasks (the caps grow to fit it); `tls`: whether the port speaks TLS.
void watch_port(uint16_t port, bool tls, int cluster_tasks);
void unwatch_port(uint16_t port);

// A TLS handshake on `fd` finished (the program's SSL_accept succeeded): the connection is
// no longer pending. A descriptor the gate does not watch is left alone.
void handshake_finished(int fd);

struct Counters {
  uint64_t admitted = 0;
  uint64_t proven = 0;               // finished their handshake
  uint64_t dropped_pending = 0;      // shut down to make room under max_pending
  uint64_t dropped_peer = 0;         // shut down to make room under max_pending_per_peer
  uint64_t refused_descriptors = 0;  // no descriptor to spare
  uint64_t timed_out = 0;            // pending past handshake_timeout
  uint64_t refused_frame = 0;        // a first frame claiming too much
  int pending = 0;                   // now
};
Counters counters();

}  // namespace accept_gate
}  // namespace troupe
