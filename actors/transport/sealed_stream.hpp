// Sealed streams: the tensor channel's bytes on a TLS cluster, sealed with AES-256-GCM under
// keys both ends exported from a mutually authenticated TLS 1.3 handshake on the same socket
// (actors/transport/channel_tls.hpp). One direction of a connection is one stream: a Sealer
// writes it, an Opener on the other end reads it.
//
// Why not SSL_write and SSL_read: the channel reads and writes one socket from two threads at
// once (frames one way, call replies the other), which one SSL object does not allow; and
// SSL_read copies every byte once more, out of its record buffer. An Opener decrypts a large
// record in place, in the tensor's own buffer, so a received tensor costs the kernel's copy
// and the decryption, as a plain one costs the kernel's copy.
//
// Record format (all integers little-endian):
//
//   +--------------------+----------------------+-----------+
//   | length: uint32     | ciphertext: length B | tag: 16 B |
//   +--------------------+----------------------+-----------+
//
// - length is the plaintext's length, 1 to kMaxRecordBytes, and is authenticated (GCM's
//   additional data). Length 0 is the close record (no ciphertext, only the tag): the writer
//   says the stream ends here, as TLS's close_notify does. A stream that ends without it was
//   cut — the writer's process or the network failed, or someone else ended the connection
//   (an injected FIN) — and the reader can tell the two apart.
// - The nonce of a stream's n-th record (n from 0) is the stream's 12-byte IV with its last 8
//   bytes XORed with n, big-endian: TLS 1.3's construction (RFC 8446, 5.3). A stream never
//   reuses a nonce: its keys are new with every connection.
// - A stream carries at most kMaxStreamBytes of plaintext (the sealer refuses more; the
//   connection is then made again, with new keys): far below AES-GCM's usage limits.
// - A record that fails authentication, or a length out of range, ends the stream: the reader
//   delivers nothing of it, and what it decrypted (in the caller's buffer, for a large record)
//   is wiped.
//
// Record boundaries follow the writer's parts: a part of kOwnRecordBytes or more starts a
// record of its own (split at kMaxRecordBytes), so that a reader asking for that many bytes
// gets them decrypted where it wants them, with no copy; smaller parts share records.
//
// Thread safety: a Sealer's writes are serialised by the Sealer itself (a record's nonce is
// never reused, whoever calls); an Opener is used by one thread at a time; the two of a socket
// may run at the same time.
#pragma once

#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace troupe {

struct StreamKeys {
  std::array<uint8_t, 32> key;
  std::array<uint8_t, 12> iv;
};

constexpr size_t kMaxRecordBytes = 256 * 1024;
constexpr size_t kOwnRecordBytes = 16 * 1024;
constexpr uint64_t kMaxStreamBytes = uint64_t{1} << 37;  // 128 GiB
constexpr size_t kRecordHeadBytes = 4;
constexpr size_t kRecordTagBytes = 16;

class Sealer {
 public:
  explicit Sealer(const StreamKeys& keys);
  ~Sealer();
  Sealer(const Sealer&) = delete;
  Sealer& operator=(const Sealer&) = delete;

  struct Written {
    size_t bytes = 0;          // of `parts`, sealed and either on the socket or pending here
    bool would_block = false;  // MSG_DONTWAIT only: sealed bytes wait in pending()
  };
  // Sends what an earlier write left pending, then seals `parts` and sends them on `fd`. Blocks
  // until all is on the socket, unless `flags` has MSG_DONTWAIT: then whatever the socket does
  // not take now stays pending, for the next write (which may have no parts). Written.bytes <
  // the parts' total means the socket failed (errno says why) or the stream is used up; the
  // records before that went out whole.
  Written write(int fd, std::span<const iovec> parts, int flags = 0);
  bool pending() const { return sent_ < out_.size(); }

  // Seals the close record after what was written and sends it, with what is pending, without
  // blocking. Later writes fail (EPIPE). False if not all of it went out now (the socket's
  // buffer is full, or it failed): the reader will then see the stream cut.
  bool close(int fd);

 private:
  struct Cipher;
  // Appends one record of the `bytes` bytes at `segments` to out_; false if OpenSSL failed.
  bool seal(std::span<const iovec> segments, size_t bytes);
  // Sends out_ from sent_; false on an error (or would-block: errno EAGAIN).
  bool flush(int fd, int flags);

  std::unique_ptr<Cipher> cipher_;
  StreamKeys keys_;
  uint64_t records_ = 0;
  uint64_t sealed_bytes_ = 0;
  std::vector<uint8_t> out_;  // sealed records not yet (all) on the socket
  size_t sent_ = 0;           // of out_
  // Records wholly on the socket: for each record in out_, where it ends in out_ and in the
  // plaintext of the current write().
  std::vector<std::pair<size_t, size_t>> ends_;
  std::mutex writing_;  // held by write() and close()
  bool closed_ = false;
};

class Opener {
 public:
  Opener(int fd, const StreamKeys& keys);
  ~Opener();
  Opener(const Opener&) = delete;
  Opener& operator=(const Opener&) = delete;

  // Fills `data` with the next `bytes` bytes of plaintext; false once the stream ends, the
  // socket fails, or a record is refused. Then ended_cleanly() says whether the writer closed
  // it (its close record, authenticated, came at a record boundary); otherwise failure() says
  // why it ended: cut (no close record), refused, or the socket's error.
  bool read(void* data, size_t bytes);
  bool ended_cleanly() const { return ended_cleanly_; }
  const std::string& failure() const { return failure_; }

 private:
  struct Cipher;
  // Reads from the socket until `wanted` unopened bytes are buffered; false if it ends first
  // (failure_ says how).
  bool buffer(size_t wanted);
  // failure_ for a socket that gave no more bytes: `got` 0 (the end) or an error (errno).
  bool ended(ssize_t got, bool mid_record);
  // Opens the `length` bytes at `text` in place with `tag`; false (failure_ set) if refused.
  bool open(uint8_t* text, size_t length, const uint8_t* tag);
  bool refuse(std::string why);

  int fd_;
  std::unique_ptr<Cipher> cipher_;
  StreamKeys keys_;
  uint64_t records_ = 0;
  uint64_t opened_bytes_ = 0;
  std::vector<uint8_t> buffer_;
  size_t plain_ = 0, plain_end_ = 0;  // opened plaintext not yet read, in buffer_
  size_t raw_ = 0, raw_end_ = 0;      // bytes from the socket not yet opened, in buffer_
  std::string failure_;
  bool ended_cleanly_ = false;
};

}  // namespace troupe
