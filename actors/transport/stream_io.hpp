// The byte-stream primitives under the tensor channel's frames: reading a connection's stream
// (plain, through a small buffer; or opened from sealed records), writing gathered parts
// (plain or sealed), and making and watching its sockets.
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "troupe/actors/transport/sealed_stream.hpp"

namespace troupe {

// Reads a connection's stream. Plain, frames come off the socket through a 64 KiB buffer, so a
// run of small frames costs a few reads rather than five each, and bytes beyond what is
// buffered go straight to their destination. With an opener (TLS), it reads and decrypts.
class FrameReader {
 public:
  explicit FrameReader(int fd, Opener* opener = nullptr);

  // Fills `data` with the next `bytes` bytes of the stream; false once it ends or fails.
  bool read(void* data, size_t bytes);
  // After read() returned false on a sealed stream: whether its writer closed it (its close
  // record came), and if not, why it ended. A plain stream has no close record: "it closed".
  bool ended_cleanly() const { return opener_ != nullptr && opener_->ended_cleanly(); }
  bool cut() const {
    return opener_ != nullptr && !opener_->ended_cleanly() && !opener_->failure().empty();
  }
  std::string end_reason() const;

 private:
  bool fill();
  bool read_exactly(char* at, size_t bytes);

  int fd_;
  Opener* opener_;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
};

// Writes `parts` to `fd`, sealed if `sealer` (Sealer::write), until all is written, the socket
// fails, or, with MSG_DONTWAIT in `flags`, it would block. `parts` are adjusted.
Sealer::Written send_parts(int fd, Sealer* sealer, std::vector<iovec>& parts, int flags = 0);

// Whether all `bytes` of `parts` went to `fd` (sealed if `sealer`), waiting as long as it takes.
bool send_all(int fd, Sealer* sealer, std::vector<iovec> parts, size_t bytes);

// A connected socket (TCP_NODELAY) to "host:port", or -1 after `timeout` at most.
int connect_to(const std::string& endpoint, std::chrono::milliseconds timeout);

void set_no_delay(int fd);

// Whether the peer on `fd` hung up.
bool peer_hung_up(int fd);

}  // namespace troupe
