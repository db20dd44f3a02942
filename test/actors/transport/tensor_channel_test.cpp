// Tests for the tensor channel (actors/transport/tensor_channel.hpp) on loopback, in one process:
// frames reach the device they name byte for byte, malformed frames are refused without harm, and a
// tensor that cannot go on the channel arrives as an actor message instead.
#include <boost/test/unit_test.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <caf/all.hpp>

#include "free_ports.hpp"
#include "tls_credentials.hpp"
#include "troupe/actors/atoms.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/actors/transport/channel_tls.hpp"
#include "troupe/actors/transport/shared_ring.hpp"
#include "troupe/actors/transport/tensor_channel.hpp"
#include "troupe/graph/cluster/host_port.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "wait_until.hpp"

namespace troupe {
namespace {

constexpr char kDevice[] = "/job:worker/replica:0/task:1/device:CPU:0";

struct Received {
  int64_t step_id;
  std::string key;
  Tensor value;
};

// An actor standing in for a device: hands what it receives to the test thread.
struct FakeDevice {
  std::shared_ptr<Runtime> runtime = value_or_throw(Runtime::shared_default());
  std::shared_ptr<std::promise<Received>> received = std::make_shared<std::promise<Received>>();
  caf::actor actor = runtime->system().spawn(
      [](caf::event_based_actor*, std::shared_ptr<std::promise<Received>> out) -> caf::behavior {
        return {[out](recv_tensor_atom, int64_t step, std::string& key, Tensor& value) {
          out->set_value(Received{step, std::move(key), std::move(value)});
        }};
      },
      received);
  ~FakeDevice() { caf::anon_send_exit(actor, caf::exit_reason::user_shutdown); }

  Received wait() {
    auto future = received->get_future();
    BOOST_REQUIRE(future.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    return future.get();
  }
};

// Counters of the sending side move after the write returns, maybe after the receiver
// delivered: wait a little for `counter` to reach `value`.
bool reaches(const std::atomic<uint64_t>& counter, uint64_t value) {
  testing::wait_until([&] { return counter >= value; }, std::chrono::seconds(5));
  return counter == value;
}

// Sends one tensor for `device` (the actor `peer`) on `channel` to the channel at `endpoint`.
void send_one(TensorChannel& channel, const std::string& endpoint, const caf::actor& peer,
              const std::string& device, int64_t step_id, const std::string& key, Tensor value) {
  std::vector<TensorChannel::Frame> frames;
  frames.push_back({peer, device, step_id, key, std::move(value)});
  channel.send(endpoint, std::move(frames));
}

std::shared_ptr<TensorChannel> start_channel(caf::actor_system& system, bool shared_memory = true,
                                             std::shared_ptr<const ChannelTls> tls = nullptr) {
  TensorChannel::Options options;
  options.max_bytes = uint64_t{1} << 30;
  options.shared_memory = shared_memory;
  options.tls = std::move(tls);
  return value_or_throw(TensorChannel::start(system, "127.0.0.1", "127.0.0.1", options));
}

// Channel credentials of one cluster (a CA and certificates it signs), and of a stranger.
struct ChannelCredentials {
  testing::TlsCredentials files;
  std::shared_ptr<const ChannelTls> member(const std::string& name) {
    return value_or_throw(ChannelTls::create(files.make_certificate(name, "ca")));
  }
  std::shared_ptr<const ChannelTls> stranger() {
    return value_or_throw(ChannelTls::create(files.make_certificate("stranger", "other_ca")));
  }
  ChannelCredentials() {
    files.make_ca("ca");
    files.make_ca("other_ca");
  }
};

Tensor big_tensor() {
  std::vector<float> values(300 * 1000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i % 1000) - 0.5f;
  return value_or_throw(Tensor::from_vector<float>(values, TensorShape{300, 1000}));
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  return address;
}

int connect_raw(const std::string& endpoint) {
  auto port = value_or_throw(parse_host_port(endpoint)).second;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = loopback(static_cast<uint16_t>(port));
  BOOST_REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  return fd;
}

// A socket listening on a free loopback port, standing in for a peer's channel; its
// "host:port" goes to `endpoint`.
int listen_raw(std::string* endpoint) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = loopback(0);
  socklen_t length = sizeof address;
  BOOST_REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&address), length) == 0);
  BOOST_REQUIRE(listen(fd, 1) == 0);
  BOOST_REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  *endpoint = fmt::format("127.0.0.1:{}", ntohs(address.sin_port));
  return fd;
}

// What a device stand-in received, in order. The thread that delivers step `held` (if any)
// waits there until `open`.
struct Inbox {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<Received> received;
  std::optional<int64_t> held;
  bool open = false;

  // Whether `n` tensors arrived within 20 s.
  bool arrived(size_t n) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(20), [&] { return received.size() == n; });
  }
};

caf::actor spawn_inbox_device(caf::actor_system& system, std::shared_ptr<Inbox> inbox) {
  return system.spawn(
      [](caf::event_based_actor*, std::shared_ptr<Inbox> inbox) -> caf::behavior {
        return {[inbox](recv_tensor_atom, int64_t step, std::string& key, Tensor& value) {
          std::unique_lock lock(inbox->mutex);
          if (inbox->held == step) {
            inbox->changed.wait_for(lock, std::chrono::seconds(20), [&] { return inbox->open; });
          }
          inbox->received.push_back(Received{step, std::move(key), std::move(value)});
          inbox->changed.notify_all();
        }};
      },
      std::move(inbox));
}

// Sends a burst of tensors of every size — scalars, empty ones, frames that straddle the
// reader's buffer, large ones among them, one larger than the shared ring — in batches, and
// checks that all arrive, in order, equal.
struct Burst {
  std::shared_ptr<TensorChannel> sender;
  size_t large = 0;
};
Burst send_burst(bool sender_shared_memory, bool receiver_shared_memory,
                 std::shared_ptr<const ChannelTls> sender_tls = nullptr,
                 std::shared_ptr<const ChannelTls> receiver_tls = nullptr) {
  auto runtime = value_or_throw(Runtime::shared_default());
  auto& system = runtime->system();
  auto inbox = std::make_shared<Inbox>();
  caf::actor device = spawn_inbox_device(system, inbox);
  auto sender = start_channel(system, sender_shared_memory, std::move(sender_tls));
  auto receiver = start_channel(system, receiver_shared_memory, std::move(receiver_tls));
  receiver->attach(kDevice, device);
  std::vector<Tensor> sent;
  size_t large = 0;
  for (int i = 0; i < 300; ++i) {
    if (i == 150 || i == 151) {
      sent.push_back(big_tensor());
      ++large;
    } else if (i == 200) {  // more than the ring holds: it goes round
      std::vector<double> values(3 * SharedRing::kSlots * SharedRing::kSlotBytes / 8 / 2 + 5);
      for (size_t v = 0; v < values.size(); ++v)
        values[v] = static_cast<double>(v) * 0.25;
      sent.push_back(Tensor::from_vector<double>(values));
      ++large;
    } else if (i == 250 || i == 251) {  // the smallest that goes through the ring, and less
      size_t floats = TensorChannel::kSharedMemoryMinBytes / 4 - (i == 251 ? 1 : 0);
      std::vector<float> values(floats, static_cast<float>(i));
      sent.push_back(Tensor::from_vector<float>(values));
      large += i == 250 ? 1 : 0;
    } else if (i % 50 == 0) {
      sent.push_back(Tensor(DataType::kFloat, TensorShape{0, 3}));
    } else if (i % 7 == 0) {
      sent.push_back(Tensor(static_cast<int64_t>(i)));
    } else {
      std::vector<int32_t> values(static_cast<size_t>(i * 97 % 5000));
      for (size_t v = 0; v < values.size(); ++v)
        values[v] = static_cast<int32_t>(v * i);
      sent.push_back(Tensor::from_vector<int32_t>(values));
    }
    send_one(*sender, receiver->address(), device, kDevice, i, fmt::format("key{}", i),
             sent.back());
    if (i == 0) BOOST_REQUIRE(inbox->arrived(1));  // the rest go on a connection already open
  }
  BOOST_REQUIRE(inbox->arrived(sent.size()));
  {
    std::lock_guard lock(inbox->mutex);
    for (size_t i = 0; i < sent.size(); ++i) {
      BOOST_TEST(inbox->received[i].step_id == static_cast<int64_t>(i));
      BOOST_TEST(inbox->received[i].key == fmt::format("key{}", i));
      BOOST_TEST(inbox->received[i].value.equals(sent[i]), "tensor " << i);
    }
  }
  BOOST_TEST(reaches(sender->counters().frames_sent, sent.size()));
  BOOST_TEST(sender->counters().fallbacks == 0u);
  caf::anon_send_exit(device, caf::exit_reason::user_shutdown);
  return Burst{sender, large};
}

// The hello that offers a shared ring, as docs/wire.md lays it out.
struct Hello {
  uint32_t magic = 0x48505254;  // "TRPH"
  uint16_t version = 1;
  uint16_t name_bytes = 0;
  uint32_t slots = SharedRing::kSlots;
  uint32_t slot_bytes = SharedRing::kSlotBytes;
  SharedRing::Nonce nonce{};
};

bool read_exactly(int fd, void* data, size_t bytes) {
  auto* at = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t got = read(fd, at, bytes);
    if (got <= 0) return false;
    at += got;
    bytes -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tensor_channel)

BOOST_AUTO_TEST_CASE(a_frame_reaches_the_device_it_names_unchanged) {
  FakeDevice device;
  auto& system = device.runtime->system();
  auto sender = start_channel(system), receiver = start_channel(system);
  receiver->attach(kDevice, device.actor);
  Tensor sent = big_tensor();
  BOOST_REQUIRE(TensorChannel::carries(sent));
  send_one(*sender, receiver->address(), device.actor, kDevice, 42, "step;key", sent);
  Received got = device.wait();
  BOOST_TEST(got.step_id == 42);
  BOOST_TEST(got.key == "step;key");
  BOOST_TEST(got.value.equals(sent));
  BOOST_TEST(reaches(sender->counters().frames_sent, 1));
  BOOST_TEST(receiver->counters().frames_received == 1u);
  BOOST_TEST(sender->counters().fallbacks == 0u);
  BOOST_TEST(reaches(sender->counters().shared_memory_frames, 1));
}

BOOST_AUTO_TEST_CASE(string_tensors_stay_off_the_channel) {
  BOOST_TEST(!TensorChannel::carries(Tensor::from_vector<std::string>(
      std::vector<std::string>(100000, "a string tensor of many bytes"))));
  BOOST_TEST(TensorChannel::carries(Tensor(1.0f)));
  BOOST_TEST(TensorChannel::carries(big_tensor()));
}

BOOST_AUTO_TEST_CASE(a_burst_of_small_and_large_tensors_arrives_in_order) {
  Burst burst = send_burst(true, true);
  // Same host: the large ones' bytes went through shared memory.
  BOOST_TEST(burst.sender->counters().shared_memory_frames == burst.large);
}

BOOST_AUTO_TEST_CASE(where_either_side_has_no_shared_memory_the_burst_goes_on_the_socket) {
  for (auto [sender_shm, receiver_shm] : {std::pair{true, false}, std::pair{false, true}}) {
    BOOST_TEST_CONTEXT("sender " << sender_shm << ", receiver " << receiver_shm) {
      Burst burst = send_burst(sender_shm, receiver_shm);
      BOOST_TEST(burst.sender->counters().shared_memory_frames == 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(with_tls_a_burst_arrives_sealed_and_large_tensors_use_shared_memory) {
  ChannelCredentials credentials;
  Burst burst = send_burst(true, true, credentials.member("a"), credentials.member("b"));
  BOOST_TEST(burst.sender->counters().sealed_connections == 1u);
  BOOST_TEST(burst.sender->counters().shared_memory_frames == burst.large);
  Burst on_socket = send_burst(false, false, credentials.member("c"), credentials.member("d"));
  BOOST_TEST(on_socket.sender->counters().sealed_connections == 1u);
  BOOST_TEST(on_socket.sender->counters().shared_memory_frames == 0u);
}

// A channel without the cluster's credentials (another CA, or none) gets no frame through in
// either direction: the tensors go as actor messages, where CAF's TLS decides.
BOOST_AUTO_TEST_CASE(a_channel_without_the_clusters_credentials_gets_no_frame_through) {
  ChannelCredentials credentials;
  auto member = credentials.member("member");
  struct Case {
    const char* name;
    std::shared_ptr<const ChannelTls> sender, receiver;
  };
  for (const Case& c :
       {Case{"stranger to member", credentials.stranger(), member},
        Case{"member to stranger", member, credentials.stranger()},
        Case{"plain to member", nullptr, member}, Case{"member to plain", member, nullptr}}) {
    BOOST_TEST_CONTEXT(c.name) {
      FakeDevice device;
      auto& system = device.runtime->system();
      auto sender = start_channel(system, true, c.sender);
      auto receiver = start_channel(system, true, c.receiver);
      receiver->attach(kDevice, device.actor);
      Tensor sent = big_tensor();
      send_one(*sender, receiver->address(), device.actor, kDevice, 5, "k", sent);
      Received got = device.wait();
      BOOST_TEST(got.value.equals(sent));
      BOOST_TEST(sender->counters().fallbacks == 1u);
      BOOST_TEST(receiver->counters().frames_received == 0u);
      BOOST_TEST(sender->counters().sealed_connections + receiver->counters().sealed_connections <=
                 1u);  // a connector may finish before the acceptor refuses its certificate
    }
  }
}

// Small batches, far more than the socket takes, to a reader held at its first frame: the
// sending thread writes them itself while the socket takes them, and then leaves the rest of
// the batch to the writer thread instead of waiting (it may be a channel thread its peer waits
// for). All frames then arrive, in order, equal. With TLS, the records the socket did not take
// wait in the sealer for the writer thread.
void check_sender_never_waits_for_a_held_reader(std::shared_ptr<const ChannelTls> sender_tls,
                                                std::shared_ptr<const ChannelTls> receiver_tls) {
  auto runtime = value_or_throw(Runtime::shared_default());
  auto& system = runtime->system();
  auto inbox = std::make_shared<Inbox>();
  inbox->held = 0;  // holds the thread delivering step 0: the channel's reader, running the actor
  caf::actor device = spawn_inbox_device(system, inbox);
  auto sender = start_channel(system, false, sender_tls);
  auto receiver = start_channel(system, false, receiver_tls);
  receiver->attach(kDevice, device);
  send_one(*sender, receiver->address(), device, kDevice, -1, "connect", Tensor(1.0f));
  BOOST_REQUIRE(inbox->arrived(1));
  constexpr int kBatches = 300, kFramesPerBatch = 15;  // 60 KiB a batch, 18 MB in all
  std::vector<TensorChannel::Frame> sent;
  auto start = std::chrono::steady_clock::now();
  for (int b = 0; b < kBatches; ++b) {
    std::vector<TensorChannel::Frame> frames;
    for (int f = 0; f < kFramesPerBatch; ++f) {
      int i = b * kFramesPerBatch + f;
      std::vector<int32_t> values(1024 - f % 3, i);
      frames.push_back({device, kDevice, i, fmt::format("key{}", i), Tensor::from_vector(values)});
    }
    sent.insert(sent.end(), frames.begin(), frames.end());
    sender->send(receiver->address(), std::move(frames));
  }
  auto took = std::chrono::steady_clock::now() - start;
  BOOST_TEST(took < std::chrono::seconds(2));
  {
    std::lock_guard lock(inbox->mutex);
    BOOST_TEST(inbox->received.size() == 1u);  // the reader is still held at step 0
    inbox->open = true;
    inbox->changed.notify_all();
  }
  BOOST_REQUIRE(inbox->arrived(1 + sent.size()));
  for (size_t i = 0; i < sent.size(); ++i) {
    const Received& got = inbox->received[i + 1];
    BOOST_TEST(got.step_id == static_cast<int64_t>(i));
    BOOST_TEST(got.key == sent[i].key);
    BOOST_TEST(got.value.equals(sent[i].value), "tensor " << i);
  }
  BOOST_TEST(reaches(sender->counters().frames_sent, 1 + sent.size()));
  BOOST_TEST(sender->counters().fallbacks == 0u);
  caf::anon_send_exit(device, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_sender_never_waits_for_a_held_reader) {
  check_sender_never_waits_for_a_held_reader(nullptr, nullptr);
}

BOOST_AUTO_TEST_CASE(with_tls_a_sender_never_waits_for_a_held_reader) {
  ChannelCredentials credentials;
  check_sender_never_waits_for_a_held_reader(credentials.member("a"), credentials.member("b"));
}

// Nobody listens at the endpoint: the tensor goes to the device actor as a message.
BOOST_AUTO_TEST_CASE(an_unreachable_channel_falls_back_to_an_actor_message) {
  FakeDevice device;
  auto sender = start_channel(device.runtime->system());
  testing::ClosedAddress nobody_listens;
  std::string closed = nobody_listens.address();
  Tensor sent = big_tensor();
  send_one(*sender, closed, device.actor, kDevice, 7, "k", sent);
  Received got = device.wait();
  BOOST_TEST(got.step_id == 7);
  BOOST_TEST(got.value.equals(sent));
  BOOST_TEST(sender->counters().fallbacks == 1u);
}

// Garbage, a lying shape and a frame for an unknown device are refused; the channel keeps
// taking good frames on new connections.
BOOST_AUTO_TEST_CASE(malformed_frames_are_refused_and_the_channel_keeps_serving) {
  FakeDevice device;
  auto& system = device.runtime->system();
  auto receiver = start_channel(system);
  receiver->attach(kDevice, device.actor);
  {
    int fd = connect_raw(receiver->address());
    std::string garbage(4096, 'x');
    BOOST_REQUIRE(write(fd, garbage.data(), garbage.size()) > 0);
    char byte;
    BOOST_TEST(read(fd, &byte, 1) <= 0);  // closed (or reset) by the channel
    close(fd);
  }
  {
    // A valid head claiming a [2,2] float tensor of 1 MiB of data.
    struct {
      uint32_t magic = 0x54505254;
      uint16_t version = 1;
      uint8_t dtype = 1, rank = 2;
      int64_t step = 1;
      uint32_t key = 0, device = 0;
      uint64_t data = 1 << 20;
      int64_t dims[2] = {2, 2};
    } lying;
    int fd = connect_raw(receiver->address());
    BOOST_REQUIRE(write(fd, &lying, sizeof lying) == sizeof lying);
    char byte;
    BOOST_TEST(read(fd, &byte, 1) <= 0);
    close(fd);
  }
  BOOST_TEST(receiver->counters().refused == 2u);
  auto sender = start_channel(system);
  Tensor sent = big_tensor();
  send_one(*sender, receiver->address(), device.actor, "/job:nobody/replica:0/task:0/device:CPU:0",
           1, "lost", sent);
  send_one(*sender, receiver->address(), device.actor, kDevice, 2, "kept", sent);
  Received got = device.wait();
  BOOST_TEST(got.key == "kept");
  BOOST_TEST(got.value.equals(sent));
  BOOST_TEST(receiver->counters().refused == 3u);
  BOOST_TEST(receiver->counters().frames_received == 1u);
}

// 70 silent connections from a member's address used to fill the channel's 64 pending slots,
// and the member's own connection was closed unread (its tensors fell back to actor
// messages). Now the oldest silent ones from the address make room.
BOOST_AUTO_TEST_CASE(silent_connections_from_a_members_address_do_not_lock_it_out) {
  FakeDevice device;
  auto& system = device.runtime->system();
  auto receiver = start_channel(system);
  receiver->attach(kDevice, device.actor);
  std::vector<int> silent;
  for (int i = 0; i < 70; ++i)
    silent.push_back(connect_raw(receiver->address()));
  BOOST_TEST(reaches(receiver->counters().pending_dropped, 70 - 32));
  auto sender = start_channel(system);
  Tensor sent = big_tensor();
  send_one(*sender, receiver->address(), device.actor, kDevice, 3, "member", sent);
  Received got = device.wait();
  BOOST_TEST(got.key == "member");
  BOOST_TEST(sender->counters().fallbacks == 0u);
  BOOST_TEST(receiver->counters().frames_received == 1u);
  for (int fd : silent)
    close(fd);
}

// Frames for an unknown device on one connection: each is refused (and counted), but only the
// first is logged, so a flood of them cannot flood the log.
BOOST_AUTO_TEST_CASE(refusals_are_logged_once_per_connection) {
  FakeDevice device;
  auto& system = device.runtime->system();
  auto receiver = start_channel(system);
  receiver->attach(kDevice, device.actor);
  auto sender = start_channel(system);
  std::ostringstream log;
  auto* old = std::cerr.rdbuf(log.rdbuf());
  Tensor sent = big_tensor();
  for (int step = 1; step <= 5; ++step) {
    send_one(*sender, receiver->address(), device.actor,
             "/job:nobody/replica:0/task:0/device:CPU:0", step, "lost", sent);
  }
  send_one(*sender, receiver->address(), device.actor, kDevice, 6, "kept", sent);
  Received got = device.wait();
  std::cerr.rdbuf(old);
  BOOST_TEST(got.key == "kept");
  BOOST_TEST(receiver->counters().refused == 5u);
  std::string lines = log.str();
  size_t logged = 0;
  for (size_t at = lines.find("refused a frame"); at != std::string::npos;
       at = lines.find("refused a frame", at + 1)) {
    ++logged;
  }
  BOOST_TEST(logged == 1u, lines);
}

// A reader that took the ring goes away before emptying it: the writer stops waiting for room
// and the tensor goes as an actor message.
BOOST_AUTO_TEST_CASE(a_writer_gives_up_on_a_ring_whose_reader_went_away) {
  FakeDevice device;
  auto sender = start_channel(device.runtime->system());
  std::string endpoint;
  int listener = listen_raw(&endpoint);
  std::vector<float> values(3 * SharedRing::kSlots * SharedRing::kSlotBytes / 8, 1.5f);
  Tensor sent = Tensor::from_vector<float>(values);  // more than the ring holds
  send_one(*sender, endpoint, device.actor, kDevice, 9, "abandoned", sent);
  int fd = accept(listener, nullptr, nullptr);
  Hello hello;
  BOOST_REQUIRE(read_exactly(fd, &hello, sizeof hello));
  BOOST_TEST(hello.magic == Hello{}.magic);
  std::string name(hello.name_bytes, '\0');
  BOOST_REQUIRE(read_exactly(fd, name.data(), name.size()));
  auto ring = value_or_throw(SharedRing::open(name, hello.nonce, hello.slots, hello.slot_bytes));
  BOOST_REQUIRE(write(fd, "S", 1) == 1);
  char head[32];
  BOOST_REQUIRE(read_exactly(fd, head, sizeof head));  // the data waits in the full ring
  close(fd);
  close(listener);
  Received got = device.wait();
  BOOST_TEST(got.key == "abandoned");
  BOOST_TEST(got.value.equals(sent));
  BOOST_TEST(sender->counters().fallbacks == 1u);
  BOOST_TEST(sender->counters().shared_memory_frames == 0u);
}

// A writer goes away in the middle of a tensor's data in the ring: the reader drops the frame
// and the channel keeps taking tensors on new connections.
BOOST_AUTO_TEST_CASE(a_reader_drops_a_frame_whose_writer_went_away) {
  FakeDevice device;
  auto& system = device.runtime->system();
  auto receiver = start_channel(system);
  receiver->attach(kDevice, device.actor);
  {
    auto ring = value_or_throw(SharedRing::create());
    int fd = connect_raw(receiver->address());
    Hello hello;
    hello.name_bytes = static_cast<uint16_t>(ring->name().size());
    hello.nonce = ring->nonce();
    BOOST_REQUIRE(write(fd, &hello, sizeof hello) == sizeof hello);
    BOOST_REQUIRE(write(fd, ring->name().data(), ring->name().size()) ==
                  static_cast<ssize_t>(ring->name().size()));
    char answer = 0;
    BOOST_REQUIRE(read(fd, &answer, 1) == 1);
    BOOST_TEST(answer == 'S');
    ring->unlink();
    // A [1M] float tensor, of which one slot of data arrives.
    struct {
      uint32_t magic = 0x54505254;
      uint16_t version = 1;
      uint8_t dtype = 1, rank = 1;
      int64_t step = 1;
      uint32_t key = 4, device = sizeof kDevice - 1;
      uint64_t data = 4 << 20;
      int64_t dims[1] = {1 << 20};
    } head;
    BOOST_REQUIRE(write(fd, &head, sizeof head) == sizeof head);
    BOOST_REQUIRE(write(fd, "half", 4) == 4);
    BOOST_REQUIRE(write(fd, kDevice, head.device) == head.device);
    std::vector<char> slot(SharedRing::kSlotBytes, 'x');
    BOOST_REQUIRE(ring->write(slot.data(), slot.size(), [] { return true; }));
    close(fd);
  }
  auto sender = start_channel(system);
  Tensor sent = big_tensor();
  send_one(*sender, receiver->address(), device.actor, kDevice, 2, "whole", sent);
  Received got = device.wait();
  BOOST_TEST(got.key == "whole");
  BOOST_TEST(got.value.equals(sent));
  BOOST_TEST(receiver->counters().frames_received == 1u);
}

// With TLS, each direction of a connection ends with its close record when a side stops: the
// other side counts the stream closed, not cut (an injected FIN or a dead peer would show as
// cut: sealed_stream_test).
BOOST_AUTO_TEST_CASE(with_tls_a_stopping_side_closes_its_streams_with_their_close_records) {
  ChannelCredentials credentials;
  for (bool sender_stops_first : {true, false}) {
    FakeDevice device;
    auto& system = device.runtime->system();
    auto sender = start_channel(system, false, credentials.member("a"));
    auto receiver = start_channel(system, false, credentials.member("b"));
    receiver->attach(kDevice, device.actor);
    send_one(*sender, receiver->address(), device.actor, kDevice, 1, "k", big_tensor());
    BOOST_REQUIRE(device.wait().key == "k");
    if (sender_stops_first) {
      sender->stop();  // its frames stream closes; the receiver answers with its own close
      BOOST_TEST(reaches(receiver->counters().streams_closed, 1));
      BOOST_TEST(receiver->counters().streams_cut == 0u);
    } else {
      receiver->stop();  // the answers stream closes: the sender's reply thread sees it
      BOOST_TEST(reaches(sender->counters().streams_closed, 1));
      BOOST_TEST(sender->counters().streams_cut == 0u);
    }
    receiver->stop();
    sender->stop();
  }
}

BOOST_AUTO_TEST_CASE(stopping_ends_every_thread_and_later_sends_fall_back) {
  FakeDevice device;
  auto& system = device.runtime->system();
  auto sender = start_channel(system), receiver = start_channel(system);
  receiver->attach(kDevice, device.actor);
  receiver->stop();
  sender->stop();
  sender->stop();  // idempotent
  send_one(*sender, receiver->address(), device.actor, kDevice, 3, "after", big_tensor());
  BOOST_TEST(device.wait().key == "after");
  BOOST_TEST(sender->counters().fallbacks == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
