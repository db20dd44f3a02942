// tcp_connect: a blocking TCP connection to host:port that gives up after a timeout — for the
// sockets troupe opens itself beside CAF's (the tensor channel, the TLS client's plaintext
// probe) — and how to name a peer's address in messages.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <sys/socket.h>

namespace troupe {

// A connected, blocking, close-on-exec socket to `host`:`port` (each address the name resolves
// to is tried in turn, all within `timeout`), or -1.
int tcp_connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

// The IP address in `address` as text ("?" if it is neither IPv4 nor IPv6).
std::string address_text(const sockaddr_storage& address);
// "address:port" of the peer connected on `fd` ("?:0" if unknown).
std::string peer_text(int fd);
// The peer's address alone ("?" if unknown).
std::string peer_address(int fd);

}  // namespace troupe
