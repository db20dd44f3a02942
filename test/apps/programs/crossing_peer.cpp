// A task for tests of two tasks that reach each other at the same moment: task argv[1] of the
// cluster {"worker": [argv[2], argv[3]]} starts its server (TLS from TROUPE_TLS_*), waits for
// the wall-clock instant argv[4] (milliseconds since the epoch), then runs a step on the
// other task, which makes its directory connect there just as the other one connects here.
// With argv[5] "session", task 1 instead opens a session on task 0's server (a client
// connecting there just as task 0's directory connects here) and runs the step on task 0.
// Prints "got 6" and serves on (the other task may still need it) until it is killed, or
// prints the error and exits 1.
#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "troupe/actors/server.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"

int main(int argc, char** argv) {
  using namespace troupe;
  if (argc < 5 || argc > 6 || (argc == 6 && std::string(argv[5]) != "session")) {
    std::cerr << "usage: crossing_peer <0|1> <address 0> <address 1> <start, ms since epoch> "
                 "[session]\n";
    return 2;
  }
  try {
    int index = std::stoi(argv[1]);
    bool remote_session = argc == 6 && index == 1;
    auto cluster = value_or_throw(ClusterSpec::create({{"worker", {argv[2], argv[3]}}}));
    auto server = value_or_throw(Server::create(
        value_or_throw(ServerDef::create(cluster, "worker", index)), ServerOptions{}));
    Scope root = Scope::new_root();
    Scope there = root.with_device("/job:worker/task:" + std::to_string(1 - index));
    auto product = ops::Mul(there, ops::Const(there, 3.f), ops::Const(there, 2.f));
    std::this_thread::sleep_until(
        std::chrono::system_clock::time_point(std::chrono::milliseconds(std::stoll(argv[4]))));
    std::string target = remote_session ? "troupe://" + std::string(argv[2]) : server->target();
    Session session = value_or_throw(Session::create(target));
    float got = value_or_throw(session.run(product)).scalar<float>();
    std::cout << "got " << got << std::endl;
    std::this_thread::sleep_for(std::chrono::minutes(1));
  } catch (const StatusError& e) {
    std::cout << "crossing_peer: " << e.status().to_string() << std::endl;
    return 1;
  }
  return 0;
}
