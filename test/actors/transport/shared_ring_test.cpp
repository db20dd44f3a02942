// Tests for the shared-memory ring (actors/transport/shared_ring.hpp): bytes written on one thread
// are read whole on another through the ring, only a segment with the right nonce and geometry
// opens, and a side waiting for its peer gives up when asked.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "status_checks.hpp"
#include "troupe/actors/transport/shared_ring.hpp"

namespace troupe {
namespace {

using testing::check_error;

std::unique_ptr<SharedRing> opened(const SharedRing& ring) {
  return value_or_throw(
      SharedRing::open(ring.name(), ring.nonce(), SharedRing::kSlots, SharedRing::kSlotBytes));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shared_ring)

// Several messages, one far larger than the ring and some not a whole slot, in order.
BOOST_AUTO_TEST_CASE(bytes_written_on_one_side_are_read_whole_on_the_other) {
  auto writer = value_or_throw(SharedRing::create());
  auto reader = opened(*writer);
  writer->unlink();
  std::vector<size_t> sizes{1, SharedRing::kSlotBytes,
                            5 * SharedRing::kSlots * SharedRing::kSlotBytes + 3,
                            SharedRing::kSlotBytes - 1, 12345};
  std::vector<std::vector<uint8_t>> messages;
  for (size_t i = 0; i < sizes.size(); ++i) {
    messages.emplace_back(sizes[i]);
    for (size_t b = 0; b < sizes[i]; ++b)
      messages.back()[b] = static_cast<uint8_t>(b * 31 + i);
  }
  auto never = [] { return false; };
  size_t written = 0;  // checked on this thread: Boost.Test is not thread-safe
  std::thread writing([&] {
    for (const auto& message : messages)
      written += writer->write(message.data(), message.size(), never);
  });
  for (const auto& message : messages) {
    std::vector<uint8_t> got(message.size());
    BOOST_REQUIRE(reader->read(got.data(), got.size(), never));
    BOOST_TEST((got == message), "a message of " << message.size() << " bytes");
  }
  writing.join();
  BOOST_TEST(written == messages.size());
}

BOOST_AUTO_TEST_CASE(only_the_segment_with_its_nonce_and_geometry_opens) {
  auto ring = value_or_throw(SharedRing::create());
  auto open = [](const std::string& name, const SharedRing::Nonce& nonce,
                 uint32_t slots = SharedRing::kSlots) {
    return SharedRing::open(name, nonce, slots, SharedRing::kSlotBytes).status();
  };
  SharedRing::Nonce other = ring->nonce();
  other[0] ^= 1;
  check_error(open(ring->name(), other), Code::kNotFound, "another segment");
  check_error(open(ring->name(), ring->nonce(), SharedRing::kSlots * 2), Code::kInvalidArgument,
              "slots");
  check_error(open("/etc-passwd", ring->nonce()), Code::kInvalidArgument, "not a troupe ring");
  check_error(open("/troupe-../x", ring->nonce()), Code::kInvalidArgument, "not a troupe ring");
  BOOST_TEST(open(ring->name(), ring->nonce()).ok());
  ring->unlink();
  check_error(open(ring->name(), ring->nonce()), Code::kNotFound, "cannot open");
}

// A segment of a ring's name and size that others may open is refused, whoever made it.
BOOST_AUTO_TEST_CASE(a_segment_others_may_open_is_refused) {
  auto ring = value_or_throw(SharedRing::create());
  const std::string name = ring->name();
  ring->unlink();
  ring.reset();
  // Made as an attacker would: the ring's name and size, readable and writable by everyone.
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  BOOST_REQUIRE(fd >= 0);
  struct Unlink {
    std::string name;
    ~Unlink() { shm_unlink(name.c_str()); }
  } unlink_at_exit{name};
  // The size create() gives: the size open() expects (it refuses any other first).
  auto expected_size = [&] {
    auto probe = value_or_throw(SharedRing::create());
    struct stat st {};
    int probe_fd = shm_open(probe->name().c_str(), O_RDONLY | O_CLOEXEC, 0);
    fstat(probe_fd, &st);
    close(probe_fd);
    probe->unlink();
    return st.st_size;
  }();
  BOOST_REQUIRE(ftruncate(fd, expected_size) == 0);
  BOOST_REQUIRE(fchmod(fd, 0666) == 0);
  close(fd);
  check_error(
      SharedRing::open(name, SharedRing::Nonce{}, SharedRing::kSlots, SharedRing::kSlotBytes)
          .status(),
      Code::kPermissionDenied, "mode 0666");
}

// Nothing written: the reader waits until told to give up. A full ring: so does the writer.
BOOST_AUTO_TEST_CASE(a_side_waiting_for_its_peer_gives_up_when_asked) {
  auto writer = value_or_throw(SharedRing::create());
  auto reader = opened(*writer);
  writer->unlink();
  std::atomic<int> asked{0};
  auto after_three = [&] { return ++asked >= 3; };
  std::vector<char> data(SharedRing::kSlots * SharedRing::kSlotBytes + 1, 'd');
  BOOST_TEST(!reader->read(data.data(), 1, after_three));
  BOOST_TEST(asked == 3);
  asked = 0;
  BOOST_TEST(!writer->write(data.data(), data.size(), after_three));
  BOOST_TEST(asked == 3);
  // What went in before the writer gave up is still there, in order.
  std::vector<char> got(SharedRing::kSlotBytes);
  BOOST_TEST(reader->read(got.data(), got.size(), after_three));
  BOOST_TEST((got == std::vector<char>(SharedRing::kSlotBytes, 'd')));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
