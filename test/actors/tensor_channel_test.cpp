// Tests for the tensor channel (actors/tensor_channel.hpp) on loopback, in one process: frames
// reach the device they name byte for byte, malformed frames are refused without harm, and a
// tensor that cannot go on the channel arrives as an actor message instead.
#include <boost/test/unit_test.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/local_cluster.hpp"
#include "actors/messages.hpp"
#include "actors/runtime.hpp"
#include "actors/tensor_channel.hpp"
#include "graph/host_port.hpp"

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
  std::shared_ptr<Runtime> runtime = Runtime::shared_default();
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
  for (int i = 0; i < 500 && counter < value; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return counter == value;
}

std::shared_ptr<TensorChannel> start_channel(caf::actor_system& system) {
  return TensorChannel::start(system, "127.0.0.1", "127.0.0.1", uint64_t{1} << 30).value_or_throw();
}

Tensor big_tensor() {
  std::vector<float> values(300 * 1000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i % 1000) - 0.5f;
  return Tensor::from_vector<float>(values, TensorShape{300, 1000});
}

int connect_raw(const std::string& endpoint) {
  auto port = parse_host_port(endpoint).value_or_throw().second;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  BOOST_REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  return fd;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tensor_channel)

BOOST_AUTO_TEST_CASE(a_frame_reaches_the_device_it_names_unchanged) {
  FakeDevice device;
  auto& system = device.runtime->system();
  auto sender = start_channel(system), receiver = start_channel(system);
  receiver->add_device(kDevice, device.actor);
  Tensor sent = big_tensor();
  BOOST_REQUIRE(TensorChannel::takes(sent));
  sender->send(receiver->endpoint(), device.actor, kDevice, 42, "step;key", sent);
  Received got = device.wait();
  BOOST_TEST(got.step_id == 42);
  BOOST_TEST(got.key == "step;key");
  BOOST_TEST(got.value.equals(sent));
  BOOST_TEST(reaches(sender->counters().frames_sent, 1));
  BOOST_TEST(receiver->counters().frames_received == 1u);
  BOOST_TEST(sender->counters().fallbacks == 0u);
}

BOOST_AUTO_TEST_CASE(string_tensors_stay_off_the_channel) {
  BOOST_TEST(!TensorChannel::takes(Tensor::from_vector<std::string>(
      std::vector<std::string>(100000, "a string tensor of many bytes"))));
  BOOST_TEST(TensorChannel::takes(Tensor(1.0f)));
  BOOST_TEST(TensorChannel::takes(big_tensor()));
}

// A burst of tensors of every size — scalars, empty ones, frames that straddle the reader's
// buffer, a large one among them — written in batches: all arrive, in order, equal.
BOOST_AUTO_TEST_CASE(a_burst_of_small_and_large_tensors_arrives_in_order) {
  auto runtime = Runtime::shared_default();
  auto& system = runtime->system();
  struct Inbox {
    std::mutex mutex;
    std::condition_variable arrived;
    std::vector<Received> received;
  };
  auto inbox = std::make_shared<Inbox>();
  caf::actor device = system.spawn(
      [](caf::event_based_actor*, std::shared_ptr<Inbox> inbox) -> caf::behavior {
        return {[inbox](recv_tensor_atom, int64_t step, std::string& key, Tensor& value) {
          std::lock_guard lock(inbox->mutex);
          inbox->received.push_back(Received{step, std::move(key), std::move(value)});
          inbox->arrived.notify_all();
        }};
      },
      inbox);
  auto sender = start_channel(system), receiver = start_channel(system);
  receiver->add_device(kDevice, device);
  std::vector<Tensor> sent;
  for (int i = 0; i < 300; ++i) {
    if (i == 150) {
      sent.push_back(big_tensor());
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
    sender->send(receiver->endpoint(), device, kDevice, i, fmt::format("key{}", i), sent.back());
    if (i == 0) {  // the rest go on a connection already open
      std::unique_lock lock(inbox->mutex);
      BOOST_REQUIRE(inbox->arrived.wait_for(lock, std::chrono::seconds(20),
                                            [&] { return inbox->received.size() == 1; }));
    }
  }
  {
    std::unique_lock lock(inbox->mutex);
    BOOST_REQUIRE(inbox->arrived.wait_for(lock, std::chrono::seconds(20),
                                          [&] { return inbox->received.size() == sent.size(); }));
    for (size_t i = 0; i < sent.size(); ++i) {
      BOOST_TEST(inbox->received[i].step_id == static_cast<int64_t>(i));
      BOOST_TEST(inbox->received[i].key == fmt::format("key{}", i));
      BOOST_TEST(inbox->received[i].value.equals(sent[i]), "tensor " << i);
    }
  }
  BOOST_TEST(reaches(sender->counters().frames_sent, sent.size()));
  BOOST_TEST(sender->counters().fallbacks == 0u);
  caf::anon_send_exit(device, caf::exit_reason::user_shutdown);
}

// Nobody listens at the endpoint: the tensor goes to the device actor as a message.
BOOST_AUTO_TEST_CASE(an_unreachable_channel_falls_back_to_an_actor_message) {
  FakeDevice device;
  auto sender = start_channel(device.runtime->system());
  std::string closed = fmt::format("127.0.0.1:{}", pick_free_port().value_or_throw());
  Tensor sent = big_tensor();
  sender->send(closed, device.actor, kDevice, 7, "k", sent);
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
  receiver->add_device(kDevice, device.actor);
  {
    int fd = connect_raw(receiver->endpoint());
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
    int fd = connect_raw(receiver->endpoint());
    BOOST_REQUIRE(write(fd, &lying, sizeof lying) == sizeof lying);
    char byte;
    BOOST_TEST(read(fd, &byte, 1) <= 0);
    close(fd);
  }
  BOOST_TEST(receiver->counters().refused == 2u);
  auto sender = start_channel(system);
  Tensor sent = big_tensor();
  sender->send(receiver->endpoint(), device.actor, "/job:nobody/replica:0/task:0/device:CPU:0", 1,
               "lost", sent);
  sender->send(receiver->endpoint(), device.actor, kDevice, 2, "kept", sent);
  Received got = device.wait();
  BOOST_TEST(got.key == "kept");
  BOOST_TEST(got.value.equals(sent));
  BOOST_TEST(receiver->counters().refused == 3u);
  BOOST_TEST(receiver->counters().frames_received == 1u);
}

BOOST_AUTO_TEST_CASE(stopping_ends_every_thread_and_later_sends_fall_back) {
  FakeDevice device;
  auto& system = device.runtime->system();
  auto sender = start_channel(system), receiver = start_channel(system);
  receiver->add_device(kDevice, device.actor);
  receiver->stop();
  sender->stop();
  sender->stop();  // idempotent
  sender->send(receiver->endpoint(), device.actor, kDevice, 3, "after", big_tensor());
  BOOST_TEST(device.wait().key == "after");
  BOOST_TEST(sender->counters().fallbacks == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
