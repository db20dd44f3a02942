// The reading side of a tensor channel connection: serves one accepted socket until its
// stream ends or breaks. With TLS it first runs the handshake as the acceptor (the peer must
// hold a certificate of the cluster's CA); then it answers a hello (taking the shared-memory
// ring it offers if it can open it), delivers tensor frames to their device actors, and
// delivers calls with the connection's responder as their sender (responder.hpp).
//
// A frame that does not check out closes the connection (one log line per connection); a frame
// for a device this process does not have is read and dropped.
#pragma once

#include "troupe/actors/transport/channel_context.hpp"

namespace troupe {

// Serves `fd`, an accepted connection counted in context.handshaking (with TLS) until its
// handshake ends. Leaves `fd` open: the caller closes it.
void serve_connection(ChannelContext& context, int fd);

}  // namespace troupe
