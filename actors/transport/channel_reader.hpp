// The reading side of a tensor channel connection: serves one accepted socket until its
// stream ends or breaks. With TLS it first runs the handshake as the acceptor (the peer must
// hold a certificate of the cluster's CA); then it answers a hello (taking the shared-memory
// ring it offers if it can open it), delivers tensor frames to their device actors, and
// delivers calls with the connection's responder as their sender (responder.hpp).
//
// Admission: the first frame must be a hello, read within ChannelOptions::handshake_timeout of
// the accept (the TLS handshake included); until then the connection is pending. A frame that
// does not check out closes the connection (one log line per connection); a frame for a device
// this process does not have is read and dropped. Memory for a call's payload is reserved as
// its bytes arrive, not as its head claims: a head is 32 bytes, a claim up to max_bytes.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "troupe/actors/transport/channel_context.hpp"

namespace troupe {

struct AnswerLink;

// Serves `fd`, an accepted connection counted in context.pending, and with `pending` set,
// until its hello has been read (or it fails first). Leaves `fd` open: the caller closes it.
// `publish`, if given, is called with the connection's answer stream once it is sealed, so
// that a stopping channel can close that stream with its close record (sealed_stream.hpp).
// A sealed stream its writer closes is answered with the close record of the answers.
void serve_connection(ChannelContext& context, int fd, std::atomic<bool>& pending,
                      const std::function<void(std::shared_ptr<AnswerLink>)>& publish = {});

}  // namespace troupe
