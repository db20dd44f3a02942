// wait_until: the one way tests wait for something to happen. It polls, because what tests
// wait for (a counter, a connection closing, a thread ending) has no notification of its own,
// and it gives up at a deadline, so that a test fails instead of hanging.
#pragma once

#include <chrono>
#include <thread>

namespace troupe::testing {

// Whether `condition()` held within `timeout`; asked every 5 ms.
template <class Condition>
bool wait_until(Condition condition,
                std::chrono::milliseconds timeout = std::chrono::milliseconds(20000)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace troupe::testing
