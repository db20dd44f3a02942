// Tests for sealed streams (actors/transport/sealed_stream.hpp) on a socket pair: bytes arrive
// as written whatever the parts and reads, a changed, reordered or foreign record is refused
// with nothing of it delivered, and a write that would block keeps its records for later.
#include <boost/test/unit_test.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "troupe/actors/transport/sealed_stream.hpp"

namespace troupe {
namespace {

StreamKeys keys(uint8_t seed) {
  StreamKeys out;
  for (size_t i = 0; i < out.key.size(); ++i)
    out.key[i] = static_cast<uint8_t>(seed + i);
  for (size_t i = 0; i < out.iv.size(); ++i)
    out.iv[i] = static_cast<uint8_t>(seed * 3 + i);
  return out;
}

struct SocketPair {
  int fds[2];
  SocketPair() { BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0); }
  ~SocketPair() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
};

std::vector<uint8_t> pattern(size_t bytes, uint8_t seed) {
  std::vector<uint8_t> out(bytes);
  for (size_t i = 0; i < bytes; ++i)
    out[i] = static_cast<uint8_t>(i * 31 + seed);
  return out;
}

// Everything `sealer` writes on one end (then its close record, with `close`), read back raw
// from the other.
std::vector<uint8_t> sealed_bytes(Sealer& sealer, const std::vector<uint8_t>& data,
                                  bool close = false) {
  SocketPair pair;
  iovec part{const_cast<uint8_t*>(data.data()), data.size()};
  BOOST_REQUIRE(sealer.write(pair.fds[0], {&part, 1}).bytes == data.size());
  if (close) BOOST_REQUIRE(sealer.close(pair.fds[0]));
  ::shutdown(pair.fds[0], SHUT_WR);
  std::vector<uint8_t> out;
  uint8_t buffer[65536];
  for (ssize_t got; (got = ::read(pair.fds[1], buffer, sizeof buffer)) > 0;)
    out.insert(out.end(), buffer, buffer + got);
  return out;
}

// Writes `raw` on `fd` from a thread of its own, then ends that direction.
std::thread write_raw(int fd, const std::vector<uint8_t>& raw) {
  return std::thread([fd, &raw] {
    size_t at = 0;
    while (at < raw.size()) {
      ssize_t put = ::write(fd, raw.data() + at, raw.size() - at);
      if (put <= 0) break;
      at += static_cast<size_t>(put);
    }
    ::shutdown(fd, SHUT_WR);
  });
}

// What an Opener with `key` makes of `raw`: the bytes read before it stopped, and why.
std::pair<std::vector<uint8_t>, std::string> open_raw(const std::vector<uint8_t>& raw,
                                                      const StreamKeys& key, size_t wanted) {
  SocketPair pair;
  std::thread writer = write_raw(pair.fds[0], raw);
  Opener opener(pair.fds[1], key);
  std::vector<uint8_t> out(wanted);
  bool read = opener.read(out.data(), out.size());
  writer.join();
  if (!read) out.clear();
  return {out, opener.failure()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sealed_stream)

BOOST_AUTO_TEST_CASE(bytes_arrive_as_written_whatever_the_parts_and_reads) {
  SocketPair pair;
  // Parts of every kind: tiny ones that share records, some just under and over the size of a
  // record of their own, and one larger than a record.
  std::vector<std::vector<uint8_t>> parts;
  for (size_t size : {size_t{1}, size_t{32}, kOwnRecordBytes - 1, kOwnRecordBytes, size_t{7},
                      kMaxRecordBytes + 12345, size_t{0}, kMaxRecordBytes, size_t{100},
                      3 * kMaxRecordBytes + 1}) {
    parts.push_back(pattern(size, static_cast<uint8_t>(parts.size())));
  }
  std::vector<uint8_t> all;
  for (const auto& part : parts)
    all.insert(all.end(), part.begin(), part.end());
  size_t rounds_written_whole = 0;  // checked on this thread: Boost.Test is not thread-safe
  std::thread writer([&] {
    Sealer sealer(keys(1));
    for (int round = 0; round < 2; ++round) {
      std::vector<iovec> io;
      for (auto& part : parts)
        io.push_back({part.data(), part.size()});
      rounds_written_whole += sealer.write(pair.fds[0], io).bytes == all.size();
    }
  });
  Opener opener(pair.fds[1], keys(1));
  // First round: read in the parts' own sizes (large reads land in place); second: odd sizes.
  std::vector<uint8_t> got;
  for (const auto& part : parts) {
    std::vector<uint8_t> piece(part.size());
    BOOST_REQUIRE(opener.read(piece.data(), piece.size()));
    BOOST_CHECK(piece == part);
  }
  for (size_t at = 0, step = 1; at < all.size(); step = step * 7 % 100003 + 1) {
    size_t take = std::min(step, all.size() - at);
    std::vector<uint8_t> piece(take);
    BOOST_REQUIRE(opener.read(piece.data(), take));
    got.insert(got.end(), piece.begin(), piece.end());
    at += take;
  }
  writer.join();
  BOOST_TEST(rounds_written_whole == 2u);
  BOOST_TEST((got == all));
  BOOST_TEST(opener.failure().empty());
}

BOOST_AUTO_TEST_CASE(a_changed_byte_anywhere_in_a_record_is_refused) {
  for (size_t size : {size_t{100}, kOwnRecordBytes * 2}) {  // a buffered and an in-place record
    Sealer sealer(keys(2));
    std::vector<uint8_t> raw = sealed_bytes(sealer, pattern(size, 9));
    BOOST_REQUIRE(raw.size() == kRecordHeadBytes + size + kRecordTagBytes);
    BOOST_TEST(open_raw(raw, keys(2), size).first == pattern(size, 9));
    for (size_t at : {kRecordHeadBytes, kRecordHeadBytes + size / 2, raw.size() - 1}) {
      std::vector<uint8_t> changed = raw;
      changed[at] ^= 0x01;
      auto [read, why] = open_raw(changed, keys(2), size);
      BOOST_TEST(read.empty(), "byte " << at);
      BOOST_TEST(why == "record 0 failed authentication");
    }
    // The length is authenticated too: one less is refused, not read short.
    std::vector<uint8_t> shorter = raw;
    shorter[0] -= 1;
    BOOST_TEST(open_raw(shorter, keys(2), size - 1).first.empty());
  }
}

// A large record is decrypted in the caller's buffer before its tag is checked: refused, it
// leaves nothing of the decryption there.
BOOST_AUTO_TEST_CASE(a_refused_record_leaves_no_plaintext_in_the_callers_buffer) {
  const size_t size = kOwnRecordBytes * 2;
  Sealer sealer(keys(4));
  std::vector<uint8_t> raw = sealed_bytes(sealer, pattern(size, 5));
  raw[raw.size() - 1] ^= 0x01;  // the tag: every byte of ciphertext decrypts as it was
  SocketPair pair;
  std::thread writer([&] {
    for (size_t at = 0; at < raw.size();) {
      ssize_t put = ::write(pair.fds[0], raw.data() + at, raw.size() - at);
      if (put <= 0) break;
      at += static_cast<size_t>(put);
    }
  });
  Opener opener(pair.fds[1], keys(4));
  std::vector<uint8_t> buffer(size, 0xAA);
  const bool read = opener.read(buffer.data(), buffer.size());
  writer.join();
  BOOST_TEST(!read);
  BOOST_TEST(opener.failure() == "record 0 failed authentication");
  BOOST_TEST((buffer == std::vector<uint8_t>(size, 0)), "the buffer holds what was decrypted");
}

// Writers on several threads at once through one Sealer: every record opens (a nonce used
// twice, or records interleaved, would be refused) and every byte arrives.
BOOST_AUTO_TEST_CASE(writes_from_several_threads_at_once_never_share_a_nonce) {
  SocketPair pair;
  constexpr int kThreads = 4, kWrites = 200;
  const std::vector<uint8_t> message = pattern(1000, 7);  // records shared by small parts
  Sealer sealer(keys(6));
  std::vector<std::thread> writers;
  std::atomic<int> whole{0};
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&] {
      for (int i = 0; i < kWrites; ++i) {
        iovec part{const_cast<uint8_t*>(message.data()), message.size()};
        whole += sealer.write(pair.fds[0], {&part, 1}).bytes == message.size();
      }
    });
  }
  Opener opener(pair.fds[1], keys(6));
  int messages = 0;
  std::vector<uint8_t> got(message.size());
  for (; messages < kThreads * kWrites; ++messages) {
    if (!opener.read(got.data(), got.size()) || got != message) break;
  }
  for (auto& w : writers)
    w.join();
  BOOST_TEST(messages == kThreads * kWrites, opener.failure());
  BOOST_TEST(whole.load() == kThreads * kWrites);
}

BOOST_AUTO_TEST_CASE(records_replayed_reordered_or_sealed_with_other_keys_are_refused) {
  Sealer sealer(keys(3));
  std::vector<uint8_t> first = sealed_bytes(sealer, pattern(50, 1));
  std::vector<uint8_t> second = sealed_bytes(sealer, pattern(50, 2));
  std::vector<uint8_t> swapped = second;
  swapped.insert(swapped.end(), first.begin(), first.end());
  BOOST_TEST(open_raw(swapped, keys(3), 50).second == "record 0 failed authentication");
  std::vector<uint8_t> replayed = first;
  replayed.insert(replayed.end(), first.begin(), first.end());
  BOOST_TEST(open_raw(replayed, keys(3), 100).second == "record 1 failed authentication");
  BOOST_TEST(open_raw(first, keys(4), 50).second == "record 0 failed authentication");
  // A length no sealer writes.
  std::vector<uint8_t> huge(64, 0);
  uint32_t length = kMaxRecordBytes + 1;
  std::memcpy(huge.data(), &length, sizeof length);
  BOOST_TEST(open_raw(huge, keys(3), 10).second.find("a record of 262145 bytes") == 0u);
}

BOOST_AUTO_TEST_CASE(a_write_that_would_block_keeps_its_records_for_the_next_write) {
  SocketPair pair;
  int small = 4096;
  ::setsockopt(pair.fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  Sealer sealer(keys(5));
  std::vector<uint8_t> data = pattern(kOwnRecordBytes - 1, 7);  // more than the socket takes
  std::vector<uint8_t> sent;
  Sealer::Written written;
  for (int i = 0; i < 64 && !written.would_block; ++i) {
    iovec part{data.data(), data.size()};
    written = sealer.write(pair.fds[0], {&part, 1}, MSG_DONTWAIT);
    BOOST_REQUIRE(written.bytes == data.size());  // sealed: the frames count as written
    sent.insert(sent.end(), data.begin(), data.end());
  }
  BOOST_REQUIRE(written.would_block);
  BOOST_TEST(sealer.pending());
  std::vector<uint8_t> got(sent.size());
  bool read = false;  // checked on this thread: Boost.Test is not thread-safe
  std::thread reader([&] {
    Opener opener(pair.fds[1], keys(5));
    read = opener.read(got.data(), got.size());
  });
  BOOST_TEST(sealer.write(pair.fds[0], {}).bytes == 0u);  // flushes what waited
  BOOST_TEST(!sealer.pending());
  reader.join();
  BOOST_TEST(read);
  BOOST_TEST((got == sent));
}

BOOST_AUTO_TEST_CASE(a_write_to_a_closed_socket_fails_with_the_reason) {
  int fds[2];
  BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  ::close(fds[1]);
  Sealer sealer(keys(6));
  std::vector<uint8_t> data = pattern(1000, 1);
  iovec part{data.data(), data.size()};
  auto written = sealer.write(fds[0], {&part, 1});
  BOOST_TEST(written.bytes == 0u);
  BOOST_TEST(errno == EPIPE);
  ::close(fds[0]);
}

// What an Opener with `key` reads of `raw` (`wanted` bytes, then one more byte): whether the
// first read succeeded, whether the stream then ended cleanly, and the failure.
struct Ending {
  bool read = false;
  bool clean = false;
  std::string failure;
};
Ending read_to_end(const std::vector<uint8_t>& raw, const StreamKeys& key, size_t wanted) {
  SocketPair pair;
  std::thread writer = write_raw(pair.fds[0], raw);
  Opener opener(pair.fds[1], key);
  std::vector<uint8_t> out(wanted);
  Ending ending;
  ending.read = opener.read(out.data(), out.size());
  uint8_t more = 0;
  if (ending.read) BOOST_CHECK(!opener.read(&more, 1));
  writer.join();
  ending.clean = opener.ended_cleanly();
  ending.failure = opener.failure();
  return ending;
}

BOOST_AUTO_TEST_CASE(a_closed_stream_ends_cleanly_and_a_cut_one_says_so) {
  // Closed by its writer: everything read, then a clean end.
  Sealer closing(keys(7));
  std::vector<uint8_t> closed = sealed_bytes(closing, pattern(kOwnRecordBytes * 2, 3), true);
  Ending clean = read_to_end(closed, keys(7), kOwnRecordBytes * 2);
  BOOST_TEST(clean.read);
  BOOST_TEST(clean.clean);
  BOOST_TEST(clean.failure.empty());
  // The same records without the close record (a FIN injected, a writer that died): cut.
  std::vector<uint8_t> cut(closed.begin(), closed.end() - kRecordHeadBytes - kRecordTagBytes);
  Ending ended = read_to_end(cut, keys(7), kOwnRecordBytes * 2);
  BOOST_TEST(ended.read);
  BOOST_TEST(!ended.clean);
  // (One record: a part of kOwnRecordBytes or more is a record of its own.)
  BOOST_TEST(ended.failure.find("the stream ended without its close record after 1 record(s): "
                                "cut") == 0u,
             ended.failure);
  // Cut inside a record (a large one read in place, and a small one buffered).
  std::vector<uint8_t> halfway(closed.begin(), closed.begin() + kOwnRecordBytes + 100);
  Ending inside = read_to_end(halfway, keys(7), kOwnRecordBytes * 2);
  BOOST_TEST(!inside.read);
  BOOST_TEST(inside.failure == "the stream was cut in the middle of record 0");
  Sealer small(keys(8));
  std::vector<uint8_t> few = sealed_bytes(small, pattern(100, 1));
  few.resize(few.size() - 5);
  BOOST_TEST(read_to_end(few, keys(8), 100).failure ==
             "the stream was cut in the middle of record 0");
  // A close record is authenticated like any other: one sealed with other keys, or moved, is
  // refused.
  Sealer stranger(keys(9));
  std::vector<uint8_t> forged = sealed_bytes(stranger, {});
  BOOST_TEST(forged.empty());  // nothing written, nothing sealed
  std::vector<uint8_t> foreign_close = sealed_bytes(stranger, pattern(10, 1), true);
  std::vector<uint8_t> spliced(cut);
  spliced.insert(spliced.end(), foreign_close.end() - kRecordHeadBytes - kRecordTagBytes,
                 foreign_close.end());
  Ending refused = read_to_end(spliced, keys(7), kOwnRecordBytes * 2);
  BOOST_TEST(!refused.clean);
  BOOST_TEST(refused.failure == "record 1 failed authentication");
}

BOOST_AUTO_TEST_CASE(after_its_close_record_a_stream_takes_no_more_writes) {
  SocketPair pair;
  Sealer sealer(keys(10));
  BOOST_TEST(sealer.close(pair.fds[0]));
  BOOST_TEST(sealer.close(pair.fds[0]));  // once only, and idempotent
  std::vector<uint8_t> data = pattern(10, 1);
  iovec part{data.data(), data.size()};
  auto written = sealer.write(pair.fds[0], {&part, 1});
  BOOST_TEST(written.bytes == 0u);
  BOOST_TEST(errno == EPIPE);
  ::shutdown(pair.fds[0], SHUT_WR);
  Opener opener(pair.fds[1], keys(10));
  uint8_t byte = 0;
  BOOST_TEST(!opener.read(&byte, 1));
  BOOST_TEST(opener.ended_cleanly());
  BOOST_TEST(!opener.read(&byte, 1));  // stays ended
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
