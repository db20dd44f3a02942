// Sealed streams: AES-256-GCM records on a socket (format in sealed_stream.hpp).
#include "troupe/actors/transport/sealed_stream.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include <fmt/core.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

namespace troupe {
namespace {

static_assert(std::endian::native == std::endian::little, "record lengths are little-endian");
static_assert(kMaxRecordBytes <= INT32_MAX, "EVP takes record lengths as int");

// In blocking writes, sealed records go to the socket whenever this many are waiting: memory
// stays bounded for any tensor, and the kernel gets bytes while the next ones are sealed.
constexpr size_t kFlushBytes = 64 * 1024;

// One direction's AES-256-GCM context, its key set once.
class Gcm {
 public:
  // If OpenSSL cannot set it up (no memory), every record fails: its connection ends.
  Gcm(const StreamKeys& keys, bool encrypt) : context_(EVP_CIPHER_CTX_new()), encrypt_(encrypt) {
    ready_ =
        context_ != nullptr && EVP_CipherInit_ex(context_, EVP_aes_256_gcm(), nullptr,
                                                 keys.key.data(), nullptr, encrypt ? 1 : 0) == 1;
  }
  ~Gcm() { EVP_CIPHER_CTX_free(context_); }
  Gcm(const Gcm&) = delete;
  Gcm& operator=(const Gcm&) = delete;

  // Starts record `sequence` of `length` bytes.
  bool begin(const StreamKeys& keys, uint64_t sequence, uint32_t length) {
    std::array<uint8_t, 12> nonce = keys.iv;
    for (int i = 0; i < 8; ++i)
      nonce[11 - i] ^= static_cast<uint8_t>(sequence >> (8 * i));
    int ignored = 0;
    return ready_ &&
           EVP_CipherInit_ex(context_, nullptr, nullptr, nullptr, nonce.data(), -1) == 1 &&
           EVP_CipherUpdate(context_, nullptr, &ignored, reinterpret_cast<uint8_t*>(&length),
                            sizeof length) == 1;
  }
  // Encrypts or decrypts `bytes` from `in` to `out` (which may be `in`).
  bool update(uint8_t* out, const uint8_t* in, size_t bytes) {
    int written = 0;
    return EVP_CipherUpdate(context_, out, &written, in, static_cast<int>(bytes)) == 1 &&
           static_cast<size_t>(written) == bytes;
  }
  // Sealing: writes the tag. Opening: checks it.
  bool finish(uint8_t* tag) {
    int ignored = 0;
    uint8_t none[16];
    if (encrypt_) {
      return EVP_CipherFinal_ex(context_, none, &ignored) == 1 &&
             EVP_CIPHER_CTX_ctrl(context_, EVP_CTRL_GCM_GET_TAG, kRecordTagBytes, tag) == 1;
    }
    return EVP_CIPHER_CTX_ctrl(context_, EVP_CTRL_GCM_SET_TAG, kRecordTagBytes, tag) == 1 &&
           EVP_CipherFinal_ex(context_, none, &ignored) == 1;
  }

 private:
  EVP_CIPHER_CTX* context_;
  bool encrypt_;
  bool ready_ = false;
};

}  // namespace

struct Sealer::Cipher : Gcm {
  using Gcm::Gcm;
};
struct Opener::Cipher : Gcm {
  using Gcm::Gcm;
};

Sealer::Sealer(const StreamKeys& keys)
    : cipher_(std::make_unique<Cipher>(keys, true)), keys_(keys) {}
Sealer::~Sealer() = default;

bool Sealer::seal(std::span<const iovec> segments, size_t bytes) {
  size_t at = out_.size();
  out_.resize(at + kRecordHeadBytes + bytes + kRecordTagBytes);
  uint8_t* record = out_.data() + at;
  auto length = static_cast<uint32_t>(bytes);
  std::memcpy(record, &length, sizeof length);
  uint8_t* text = record + kRecordHeadBytes;
  bool sealed = cipher_->begin(keys_, records_, length);
  for (const iovec& segment : segments) {
    sealed = sealed &&
             cipher_->update(text, static_cast<const uint8_t*>(segment.iov_base), segment.iov_len);
    text += segment.iov_len;
  }
  if (!(sealed && cipher_->finish(text))) {  // OpenSSL without memory: the connection ends
    out_.resize(at);
    errno = ENOMEM;
    return false;
  }
  ++records_;
  sealed_bytes_ += bytes;
  return true;
}

bool Sealer::flush(int fd, int flags) {
  while (sent_ < out_.size()) {
    ssize_t put = ::send(fd, out_.data() + sent_, out_.size() - sent_, MSG_NOSIGNAL | flags);
    if (put < 0 && errno == EINTR) continue;
    if (put == 0) errno = EPIPE;
    if (put <= 0) return false;
    sent_ += static_cast<size_t>(put);
  }
  out_.clear();
  sent_ = 0;
  return true;
}

bool Sealer::close(int fd) {
  std::lock_guard lock(writing_);
  if (closed_) return true;
  closed_ = true;
  if (pending() && !flush(fd, MSG_DONTWAIT)) return false;
  return seal({}, 0) && flush(fd, MSG_DONTWAIT);
}

Sealer::Written Sealer::write(int fd, std::span<const iovec> parts, int flags) {
  // One writer at a time, whatever the callers do: two at once would seal two records under
  // one nonce.
  std::lock_guard lock(writing_);
  if (closed_) {
    errno = EPIPE;
    return {};
  }
  const bool wait = (flags & MSG_DONTWAIT) == 0;
  if (pending() && !flush(fd, flags) && (wait || errno != EAGAIN)) return {};
  ends_.clear();
  size_t plain = 0;      // bytes of `parts` sealed
  size_t confirmed = 0;  // of those, in records wholly on the socket
  std::vector<iovec> record;
  size_t record_bytes = 0;
  // Seals the record gathered so far; in blocking writes, sends when enough waits.
  auto close_record = [&]() -> bool {
    if (record_bytes == 0) return true;
    if (sealed_bytes_ + record_bytes > kMaxStreamBytes) {
      errno = EMSGSIZE;
      return false;
    }
    if (!seal(record, record_bytes)) return false;
    plain += record_bytes;
    ends_.emplace_back(out_.size(), plain);
    record.clear();
    record_bytes = 0;
    if (wait && out_.size() - sent_ >= kFlushBytes) {
      if (!flush(fd, 0)) return false;
      confirmed = plain;
      ends_.clear();
    }
    return true;
  };
  bool ok = true;
  for (const iovec& part : parts) {
    auto* base = static_cast<uint8_t*>(part.iov_base);
    if (part.iov_len >= kOwnRecordBytes) {
      ok = close_record();
      for (size_t at = 0; ok && at < part.iov_len; at += kMaxRecordBytes) {
        size_t take = std::min(kMaxRecordBytes, part.iov_len - at);
        record.push_back({base + at, take});
        record_bytes = take;
        ok = close_record();
      }
    } else {
      for (size_t at = 0; ok && at < part.iov_len;) {
        size_t take = std::min(part.iov_len - at, kMaxRecordBytes - record_bytes);
        record.push_back({base + at, take});
        record_bytes += take;
        at += take;
        if (record_bytes == kMaxRecordBytes) ok = close_record();
      }
    }
    if (!ok) break;
  }
  if (ok) ok = close_record();
  if (ok && flush(fd, flags)) return {plain, false};
  if (ok && !wait && errno == EAGAIN) return {plain, true};
  // Failed: what went out is the records up to the last that is wholly on the socket.
  int why = errno;
  for (auto [out_end, plain_end] : ends_) {
    if (out_end <= sent_) confirmed = plain_end;
  }
  out_.clear();
  sent_ = 0;
  errno = why;
  return {confirmed, false};
}

Opener::Opener(int fd, const StreamKeys& keys)
    : fd_(fd),
      cipher_(std::make_unique<Cipher>(keys, false)),
      keys_(keys),
      buffer_(kRecordHeadBytes + kMaxRecordBytes + kRecordTagBytes + 64 * 1024) {}
Opener::~Opener() = default;

bool Opener::refuse(std::string why) {
  failure_ = std::move(why);
  return false;
}

bool Opener::ended(ssize_t got, bool mid_record) {
  if (got < 0) {
    return refuse(errno == EAGAIN || errno == EWOULDBLOCK
                      ? std::string("no bytes within the socket's receive timeout")
                      : fmt::format("the socket failed: {}", std::strerror(errno)));
  }
  if (mid_record) {
    return refuse(fmt::format("the stream was cut in the middle of record {}", records_));
  }
  return refuse(
      fmt::format("the stream ended without its close record after {} record(s): cut (the writer's "
                  "process or the network failed, or the connection was ended by someone else)",
                  records_));
}

bool Opener::buffer(size_t wanted) {
  if (raw_ == raw_end_) raw_ = raw_end_ = 0;
  if (raw_end_ - raw_ >= wanted) return true;
  if (buffer_.size() - raw_ < wanted) {  // no plaintext is waiting here: see read()
    std::memmove(buffer_.data(), buffer_.data() + raw_, raw_end_ - raw_);
    raw_end_ -= raw_;
    raw_ = 0;
    plain_ = plain_end_ = 0;
  }
  while (raw_end_ - raw_ < wanted) {
    ssize_t got = ::read(fd_, buffer_.data() + raw_end_, buffer_.size() - raw_end_);
    if (got < 0 && errno == EINTR) continue;
    // Only a record's head, asked for with nothing of it here, starts at a record boundary.
    if (got <= 0) return ended(got, raw_end_ > raw_ || wanted != kRecordHeadBytes);
    raw_end_ += static_cast<size_t>(got);
  }
  return true;
}

bool Opener::open(uint8_t* text, size_t length, const uint8_t* tag) {
  uint8_t expected[kRecordTagBytes];
  std::memcpy(expected, tag, sizeof expected);  // `tag` may follow `text` in the buffer
  if (!cipher_->begin(keys_, records_, static_cast<uint32_t>(length)) ||
      !cipher_->update(text, text, length) || !cipher_->finish(expected)) {
    // What was decrypted (in place: the caller's buffer for a large record) is not to be used
    // or seen: wiped.
    OPENSSL_cleanse(text, length);
    return refuse(fmt::format("record {} failed authentication", records_));
  }
  ++records_;
  opened_bytes_ += length;
  return true;
}

bool Opener::read(void* data, size_t bytes) {
  auto* at = static_cast<uint8_t*>(data);
  while (bytes > 0) {
    if (plain_ < plain_end_) {
      size_t take = std::min(bytes, plain_end_ - plain_);
      std::memcpy(at, buffer_.data() + plain_, take);
      plain_ += take;
      at += take;
      bytes -= take;
      continue;
    }
    if (ended_cleanly_) return false;
    if (!buffer(kRecordHeadBytes)) return false;
    uint32_t length = 0;
    std::memcpy(&length, buffer_.data() + raw_, sizeof length);
    if (length == 0) {  // the close record: the writer ended the stream here
      if (!buffer(kRecordHeadBytes + kRecordTagBytes)) return false;
      uint8_t* tag = buffer_.data() + raw_ + kRecordHeadBytes;
      if (!open(tag, 0, tag)) return false;
      raw_ += kRecordHeadBytes + kRecordTagBytes;
      ended_cleanly_ = true;
      return false;
    }
    if (length > kMaxRecordBytes) {
      return refuse(
          fmt::format("a record of {} bytes (0 to {} expected)", length, kMaxRecordBytes));
    }
    if (opened_bytes_ + length > kMaxStreamBytes) {
      return refuse(fmt::format("more than {} bytes on one stream", kMaxStreamBytes));
    }
    if (length <= bytes && length >= kOwnRecordBytes) {
      // The whole record is the caller's: it is read and opened where the caller wants it.
      size_t have = std::min<size_t>(raw_end_ - raw_ - kRecordHeadBytes, length);
      std::memcpy(at, buffer_.data() + raw_ + kRecordHeadBytes, have);
      raw_ += kRecordHeadBytes + have;
      for (size_t left = length - have; left > 0;) {
        ssize_t got = ::read(fd_, at + (length - left), left);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return ended(got, true);
        left -= static_cast<size_t>(got);
      }
      if (!buffer(kRecordTagBytes)) return false;
      raw_ += kRecordTagBytes;
      if (!open(at, length, buffer_.data() + raw_ - kRecordTagBytes)) return false;
      at += length;
      bytes -= length;
      continue;
    }
    if (!buffer(kRecordHeadBytes + length + kRecordTagBytes)) return false;
    uint8_t* text = buffer_.data() + raw_ + kRecordHeadBytes;
    if (!open(text, length, text + length)) return false;
    plain_ = raw_ + kRecordHeadBytes;
    plain_end_ = plain_ + length;
    raw_ += kRecordHeadBytes + length + kRecordTagBytes;
  }
  return true;
}

}  // namespace troupe
