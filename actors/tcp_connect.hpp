// tcp_connect: a blocking TCP connection to host:port that gives up after a timeout — for the
// sockets troupe opens itself beside CAF's (the tensor channel, the TLS client's plaintext
// probe).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace troupe {

// A connected, blocking, close-on-exec socket to `host`:`port` (each address the name resolves
// to is tried in turn, all within `timeout`), or -1.
int tcp_connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

}  // namespace troupe
