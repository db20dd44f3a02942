// Runtime: the CAF actor system that troupe's actors live in, configured the way troupe needs
// (message types registered, troupe's error category, the network module loaded).
//
// Servers and sessions of one process share Runtime::shared_default() unless given their own.
// Each Server and Session holds a reference to its Runtime, so the actor system lives until the
// last of them is gone. Destroy servers and sessions before main() returns: CAF 0.17 cannot tear
// an actor system down during static destruction.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include <caf/fwd.hpp>

#include "troupe/actors/transport/accept_gate.hpp"
#include "troupe/actors/transport/tls.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe {

struct RuntimeOptions {
  // Worker threads of the actor scheduler; 0 keeps CAF's default (one per core, at least 4).
  int scheduler_threads = 0;
  // TLS for every connection (actors/transport/tls.hpp); off when no file is given.
  TlsOptions tls;
  // The largest tensor or graph one message from another process may carry, in bytes
  // (4 KiB .. 2 GiB). A bigger one is dropped on arrival with a log line; senders check it
  // first and fail with InvalidArgument. Every process of a cluster should use the same.
  uint64_t max_message_bytes = uint64_t{2} << 30;
  // Admission of connections to the ports this process's servers listen on, before they have
  // proven themselves (actors/transport/accept_gate.hpp). Process-wide: the last runtime created
  // sets it.
  AdmissionOptions admission;
  // A client of another process (Session, Server start-up) waiting on it asks it whether it is
  // alive every client_heartbeat_interval, and fails the wait with Unavailable when no answer
  // comes within client_heartbeat_timeout (0: no heartbeats; a dead process is still noticed
  // when its connection closes). A heartbeat travels on the same connection as the request:
  // the timeout must cover sending the largest feed or fetch tensor on a slow link (a session
  // sends graphs in pieces of about 1 MiB; docs/reliability.md).
  std::chrono::milliseconds client_heartbeat_interval{1000};
  std::chrono::milliseconds client_heartbeat_timeout{4000};

  // InvalidArgument for TLS settings that do not validate or a limit out of range.
  Status validate() const;
};

class Runtime {
 public:
  // A runtime with `options`; InvalidArgument for options that do not validate. The first
  // runtime of a process raises its soft limit on open files to the hard limit (as Go's
  // runtime does): every connection to a peer is a descriptor, and 1024, a common soft
  // limit, is soon reached by a node that many clients or tasks talk to.
  static StatusOr<std::shared_ptr<Runtime>> create(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  caf::actor_system& system();
  const RuntimeOptions& options() const;

  // The process's shared runtime: created when first asked for, destroyed when the last
  // holder releases it (and created anew if asked for again). Its options are those given to
  // set_default_options(), else TLS from the environment (TlsOptions::from_environment()),
  // so programs started by `troupe launch` are encrypted without code of their own.
  // InvalidArgument when those TLS settings do not validate.
  static StatusOr<std::shared_ptr<Runtime>> shared_default();

  // Sets the options of the shared runtime. InvalidArgument for TLS settings that do not
  // validate; FailedPrecondition while the shared runtime exists.
  static Status set_default_options(RuntimeOptions options);

  // Adds message types of the user's own (e.g. a custom role's) to every actor system created
  // from now on: `registrar` calls config.add_message_type<T>("name") for each. Every process
  // of a cluster must register the same types under the same names. FailedPrecondition once
  // an actor system exists (it would not know the types).
  static Status add_message_types(std::function<void(caf::actor_system_config&)> registrar);

 private:
  explicit Runtime(RuntimeOptions options);  // options already validated
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace troupe
